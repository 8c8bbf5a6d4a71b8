// Where a repository's wiki lives: the bare repository `{owner}/{repo}.wiki.git` beside the code
// repository (Forgejo's `WikiPath`), written through its own Repository entity (src/git/Repository.ts),
// so page writes to one wiki run one at a time, apart from the code repository's writes.
import type { RepositoryRef } from "../git/Repository.ts"

/** The wiki's directory beside the code repository's `….git` directory. */
export const wikiDir = (codeDir: string): string => `${codeDir.replace(/\.git$/, "")}.wiki.git`

/** The wiki's entity (named apart from the code repository's, whose name is the id). */
export const wikiRef = (repoId: number, codeDir: string): RepositoryRef => ({
  id: repoId,
  dir: wikiDir(codeDir),
  entity: `${repoId}.wiki`
})
