import { Effect, Option } from "effect"
import { HearthApi } from "../Api.ts"
import { Caller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { MarkdownRenderer, type Mode } from "./Service.ts"

// Forgejo's [markdown] FILE_EXTENSIONS default: what `file` mode renders as markdown.
const MARKDOWN_EXTENSIONS = new Set([".md", ".markdown", ".mdown", ".mkd", ".livemd"])

const extensionOf = (path: string): string => {
  const name = path.slice(path.lastIndexOf("/") + 1)
  const dot = name.lastIndexOf(".")
  return dot <= 0 ? "" : name.slice(dot).toLowerCase()
}

export const MarkdownHttp = apiGroup(HearthApi, "markdown", (handlers) =>
  Effect.gen(function* () {
    const renderer = yield* MarkdownRenderer

    const render = (text: string, mode: Mode, context?: string, wiki?: boolean) =>
      Effect.flatMap(Caller, (caller) =>
        renderer.render({
          text,
          mode,
          context,
          wiki,
          viewer: Option.match(caller, {
            onNone: () => undefined,
            onSome: ({ user }) => ({ id: user.id, isAdmin: user.isAdmin })
          })
        })
      )

    return (
      handlers
        // Forgejo keeps `gfm` and `comment` and renders anything else as plain markdown; Hearth
        // also keeps `wiki` (gfm as a wiki page).
        .handle("renderMarkdown", ({ payload: p }) => {
          const asked = (p.Mode ?? p.mode ?? "").toLowerCase()
          const mode: Mode = asked === "gfm" || asked === "comment" || asked === "wiki" ? asked : "markdown"
          return render(p.Text ?? p.text ?? "", mode, p.Context ?? p.context, p.Wiki ?? p.wiki)
        })
        // Forgejo reads the body whatever its Content-Type (`curl -d` sends a form type): raw.
        .handleRaw("renderMarkdownRaw", ({ request }) =>
          // A body over MAX_REQUEST_BODY fails the read; ErrorResponses answers it 413.
          Effect.flatMap(Effect.orDie(request.text), (text) => render(text, "markdown"))
        )
        .handle("renderMarkup", ({ payload: p }) =>
          Effect.gen(function* () {
            const asked = p.Mode ?? p.mode ?? ""
            const mode = asked.toLowerCase()
            if (mode !== "markdown" && mode !== "gfm" && mode !== "comment" && mode !== "wiki" && mode !== "file") {
              return yield* Errors.validationFailed(`Unknown mode: ${asked}`)
            }
            if (mode === "file") {
              const extension = extensionOf(p.FilePath ?? p.filePath ?? "")
              if (!MARKDOWN_EXTENSIONS.has(extension)) {
                return yield* Errors.validationFailed(`Unsupported render extension: ${extension}`)
              }
            }
            return yield* render(p.Text ?? p.text ?? "", mode, p.Context ?? p.context, p.Wiki ?? p.wiki)
          })
        )
    )
  })
)
