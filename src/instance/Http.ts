// /settings/* from the configuration. What Hearth does not have is answered as what it is: no
// LFS server (lfs_disabled), no setting that turns git over HTTP, migrations, stars or forks off
// (false), no custom emoji images (an empty list).
import { Effect } from "effect"
import { HearthApi } from "../Api.ts"
import { Settings } from "../config/Settings.ts"
import { DEFAULT_TREE_PAGE } from "../contents/Service.ts"
import { apiGroup } from "../http/Group.ts"

export const InstanceHttp = apiGroup(HearthApi, "instance", (handlers) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    return handlers
      .handle("getApiSettings", () =>
        Effect.succeed({
          max_response_items: settings.api.MAX_RESPONSE_ITEMS,
          default_paging_num: settings.api.DEFAULT_PAGING_NUM,
          default_git_trees_per_page: DEFAULT_TREE_PAGE,
          default_max_blob_size: settings.api.DEFAULT_MAX_BLOB_SIZE
        })
      )
      .handle("getAttachmentSettings", () =>
        Effect.succeed({
          enabled: settings.attachment.ENABLED,
          allowed_types: settings.attachment.ALLOWED_TYPES,
          max_size: settings.attachment.MAX_SIZE,
          max_files: settings.attachment.MAX_FILES
        })
      )
      .handle("getRepositorySettings", () =>
        Effect.succeed({
          mirrors_disabled: !settings.mirror.ENABLED,
          http_git_disabled: false,
          migrations_disabled: false,
          stars_disabled: false,
          forks_disabled: false,
          time_tracking_disabled: !settings.service.ENABLE_TIMETRACKING,
          lfs_disabled: true
        })
      )
      .handle("getUiSettings", () =>
        Effect.succeed({
          default_theme: settings.ui.DEFAULT_THEME,
          allowed_reactions: settings.ui.REACTIONS,
          custom_emojis: []
        })
      )
  })
)
