// The container registry's part of the package cleanup (Forgejo's services/packages/container
// cleanup, run by the `cleanup_packages` cron before the empty packages go): upload sessions
// untouched for a day go with their bytes (a held blob, a file under CHUNKED_UPLOAD_PATH), and
// blobs pushed a day ago that no manifest took leave their image.
import { rm } from "node:fs/promises"
import { join } from "node:path"
import { Effect } from "effect"
import { Settings } from "../../config/Settings.ts"
import { BlobStorage, type StoredBlob } from "../../storage/Service.ts"
import { PackagesRepo } from "../Repo.ts"
import { makeContainerRepo } from "./Repo.ts"

/** Forgejo's OLDER_THAN of `cleanup_packages`. */
const OLDER_THAN_MS = 24 * 60 * 60 * 1000

/** Builds the run: how many sessions and blobs it removed. */
export const makeContainerCleanup = Effect.gen(function* () {
  const settings = yield* Settings
  const storage = yield* BlobStorage
  const packagesRepo = yield* PackagesRepo
  const repo = yield* makeContainerRepo
  return Effect.gen(function* () {
    const before = new Date(Date.now() - OLDER_THAN_MS)
    let removed = 0
    for (const session of yield* repo.staleSessions(before)) {
      if (!(yield* repo.deleteSession(session.id))) continue
      if (session.sha256 !== null && session.hold !== null) {
        const sha256 = session.sha256
        yield* packagesRepo
          .transaction(
            Effect.andThen(storage.acquire({ sha256, hold: session.hold } as StoredBlob), storage.release(sha256))
          )
          .pipe(Effect.ignore)
      }
      yield* Effect.promise(() => rm(join(settings.packages.CHUNKED_UPLOAD_PATH, session.id), { force: true }))
      removed++
    }
    removed += yield* packagesRepo.transaction(repo.deleteStaleUploadedBlobs(before))
    return removed
  })
})
