// The cluster every entity and (later) workflow runs on. One node: `SingleRunner`, which owns all
// shards in this process; its runner bookkeeping stays in memory (no lock refreshes written to the
// database every few seconds), while persisted messages (workflows and their timers) live in the
// database's `cluster_*` tables and resume after a restart.
import { Layer } from "effect"
import {
  ClusterWorkflowEngine,
  MessageStorage,
  RunnerHealth,
  RunnerStorage,
  Runners,
  Sharding,
  ShardingConfig,
  SingleRunner
} from "effect/cluster"
import * as Digest from "effect/crypto/Digest"
import { RepositoryEntityLayer, RepositoryWriter } from "../git/Repository.ts"

export const ClusterLayer = SingleRunner.layer({ runnerStorage: "memory" }).pipe(Layer.provide(Digest.layerWebCrypto))

/**
 * For short-lived commands (`hearth admin …`): the same entities, with their messages in memory.
 * A command must not pick up the server's durable work (a due mirror sync, an unfinished fork) from
 * the `cluster_*` tables and then exit in the middle of it; that work waits for `serve`.
 */
const CommandClusterLayer = Sharding.layer.pipe(
  Layer.provideMerge(Runners.layerNoop),
  Layer.provideMerge(MessageStorage.layerMemory),
  Layer.provide([RunnerStorage.layerMemory, RunnerHealth.layerNoop]),
  Layer.provide(ShardingConfig.layerFromEnv()),
  Layer.provide(Digest.layerWebCrypto)
)

const entities = <E, R>(
  cluster: Layer.Layer<Sharding.Sharding | Runners.Runners | MessageStorage.MessageStorage, E, R>
) =>
  Layer.mergeAll(RepositoryEntityLayer, RepositoryWriter.layer, ClusterWorkflowEngine.layer).pipe(
    Layer.provideMerge(cluster)
  )

/**
 * The entities this node hosts, the clients Hearth's services write through, and the workflow
 * engine durable jobs run on (their messages and journals in the `cluster_*` tables).
 */
export const EntitiesLayer = entities(ClusterLayer)

/** `EntitiesLayer` for commands: nothing read from or written to the `cluster_*` tables. */
export const CommandEntitiesLayer = entities(CommandClusterLayer)
