// The cluster every entity and (later) workflow runs on. One node: `SingleRunner`, which owns all
// shards in this process; its runner bookkeeping stays in memory (no lock refreshes written to the
// database every few seconds), while persisted messages, when there are any, live in the
// database's `cluster_*` tables.
import { Layer } from "effect"
import { SingleRunner } from "effect/cluster"
import * as Digest from "effect/crypto/Digest"
import { RepositoryEntityLayer, RepositoryWriter } from "../git/Repository.ts"

export const ClusterLayer = SingleRunner.layer({ runnerStorage: "memory" }).pipe(
  Layer.provide(Digest.layerWebCrypto)
)

/** The entities this node hosts, and the clients Hearth's services write through. */
export const EntitiesLayer = Layer.mergeAll(RepositoryEntityLayer, RepositoryWriter.layer).pipe(
  Layer.provideMerge(ClusterLayer)
)
