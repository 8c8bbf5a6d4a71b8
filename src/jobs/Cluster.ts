// The cluster every entity and (later) workflow runs on. One node: `SingleRunner`, which owns all
// shards in this process; its runner bookkeeping stays in memory (no lock refreshes written to the
// database every few seconds), while persisted messages (workflows and their timers) live in the
// database's `cluster_*` tables and resume after a restart.
import { Layer } from "effect"
import { ClusterWorkflowEngine, SingleRunner } from "effect/cluster"
import * as Digest from "effect/crypto/Digest"
import { RepositoryEntityLayer, RepositoryWriter } from "../git/Repository.ts"

export const ClusterLayer = SingleRunner.layer({ runnerStorage: "memory" }).pipe(
  Layer.provide(Digest.layerWebCrypto)
)

/**
 * The entities this node hosts, the clients Hearth's services write through, and the workflow
 * engine durable jobs run on (their messages and journals in the `cluster_*` tables).
 */
export const EntitiesLayer = Layer.mergeAll(RepositoryEntityLayer, RepositoryWriter.layer, ClusterWorkflowEngine.layer).pipe(
  Layer.provideMerge(ClusterLayer)
)
