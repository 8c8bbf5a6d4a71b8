// What every web page shares: the request's context (its session, the signed-in viewer as the
// same `Principal` the API's handlers get, the CSRF token), the route wrapper that applies the
// page's access rule and checks the CSRF token of every POST, and the responses (an HTML page with
// the security headers, a redirect, the error pages). A page module builds its routes with
// `web.route` and renders with `web.page`; it never reads cookies or sessions itself.
//
// Rules, as Forgejo's web routes (routers/web/web.go):
// - `[service] REQUIRE_SIGNIN_VIEW`: every page but the account pages asks anonymous visitors to
//   sign in (a redirect to /user/login?redirect_to=…).
// - An account with `must_change_password` is sent to /user/change_password before anything else.
// - Every POST carries the form field `_csrf` (Forgejo's name): an HMAC of the session id (or, for
//   a visitor who has none, of a random cookie of its own) with [security] SECRET_KEY. A missing
//   or wrong token is a 400 page; nothing is changed.
// - Cookies are `HttpOnly`, `SameSite=Lax`, and `Secure` when ROOT_URL is https.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { brotliCompressSync, createGzip, gzipSync, constants as zlib } from "node:zlib"
import { Cause, Effect, Option, Stream } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Settings, type SettingsShape } from "../config/Settings.ts"
import { answerOutage } from "../health/Database.ts"
import { type Principal, setCaller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { NotificationsService } from "../notifications/Service.ts"
import type { Session } from "../sessions/Service.ts"
import { Sessions } from "../sessions/Service.ts"
import type { UserRow } from "../users/Repo.ts"
import { highlighter } from "./code/Highlight.ts"
import { type Html, html } from "./Html.ts"
import { layout } from "./Layout.ts"

/** Where a streamed page's body goes in its HTML (`streamPage`). */
export const STREAM_MARK = "<!--hearth:stream-->"

export const SESSION_COOKIE = "hearth_session"
/** How long after the web interface's first page the syntax highlighter warms up. */
const HIGHLIGHTER_WARM_UP_DELAY = "1 second"
export const CSRF_COOKIE = "hearth_csrf"

/**
 * On every page: no inline script or style at all (CSP), no framing, no sniffing, the origin only
 * as referrer to other sites. Images may come from https sites (README badges, avatars).
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; connect-src 'self'; " +
    "font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "referrer-policy": "strict-origin-when-cross-origin",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store"
}

/** Pages smaller than this go uncompressed (the headers would outweigh the gain). */
const COMPRESS_FROM = 1024

/**
 * Past this size a page (a long file, blame or diff: exempt from the 100 KB budget) is
 * compressed at a lower level: on a 450 KB file view brotli takes 1.8 ms at quality 2 and 5.2 ms at
 * quality 5, for 50 KB instead of 40 KB (measured with the page of `npm run bench:web`).
 */
const LARGE_PAGE = 256 * 1024

/** The encoding a client accepts that pages are compressed with: brotli, else gzip. */
const encodingFor = (accept: string | undefined): "br" | "gzip" | undefined => {
  if (accept === undefined) return undefined
  const accepted = new Set<string>()
  for (const item of accept.toLowerCase().split(",")) {
    const [name, ...params] = item.split(";").map((part) => part.trim())
    const q = params.find((p) => p.startsWith("q="))
    if (name !== undefined && (q === undefined || Number(q.slice(2)) > 0)) accepted.add(name)
  }
  return accepted.has("br") ? "br" : accepted.has("gzip") ? "gzip" : undefined
}

/**
 * HTML as a response: compressed when the client accepts it and the page is worth it, with the
 * security headers (and `vary: accept-encoding`, as a cache must know).
 */
export const htmlResponse = (
  request: HttpServerRequest.HttpServerRequest,
  body: string,
  status = 200
): HttpServerResponse.HttpServerResponse => {
  const encoding = body.length < COMPRESS_FROM ? undefined : encodingFor(request.headers["accept-encoding"])
  const headers = { ...SECURITY_HEADERS, vary: "accept-encoding" }
  if (encoding === undefined)
    return HttpServerResponse.text(body, { status, contentType: "text/html; charset=utf-8", headers })
  const bytes = Buffer.from(body, "utf8")
  const large = bytes.length > LARGE_PAGE
  const compressed =
    encoding === "br"
      ? brotliCompressSync(bytes, {
          params: {
            [zlib.BROTLI_PARAM_QUALITY]: large ? 2 : 4,
            [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT,
            [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.length
          }
        })
      : gzipSync(bytes, { level: large ? 3 : 6 })
  return HttpServerResponse.uint8Array(compressed, {
    status,
    contentType: "text/html; charset=utf-8",
    headers: { ...headers, "content-encoding": encoding }
  })
}

/**
 * A streamed page gzipped as it goes: each chunk is compressed and flushed (Z_SYNC_FLUSH) before the
 * next is asked for, so what was made reaches the browser at once, at a fraction of the bytes.
 */
const gzipChunks = (chunks: Stream.Stream<Uint8Array>): Stream.Stream<Uint8Array> =>
  Stream.suspend(() => {
    const gzip = createGzip({ level: 3 })
    const out: Array<Buffer> = []
    gzip.on("data", (data: Buffer) => out.push(data))
    const take = () => new Uint8Array(Buffer.concat(out.splice(0)))
    const step = (bytes: Uint8Array) =>
      Effect.callback<Uint8Array>((resume) => {
        gzip.write(bytes)
        gzip.flush(zlib.Z_SYNC_FLUSH, () => resume(Effect.succeed(take())))
      })
    const end = Effect.callback<Uint8Array>((resume) => {
      gzip.once("end", () => resume(Effect.succeed(take())))
      gzip.end()
    })
    return Stream.concat(Stream.mapEffect(chunks, step), Stream.fromEffect(end))
  })

export interface WebContext {
  readonly request: HttpServerRequest.HttpServerRequest
  /** The request's URL, on ROOT_URL's origin. */
  readonly url: URL
  /** The session of any stage (a pending two-factor sign-in too). */
  readonly session: Session | undefined
  /** The signed-in account, as the API's handlers see a caller. */
  readonly viewer: Principal | undefined
  /** The CSRF token every form of this page carries. */
  readonly csrf: string
  readonly settings: SettingsShape
  /** Cookies every response to this request sets (a new CSRF cookie, a session). */
  readonly cookies: Array<readonly [string, string, { readonly maxAge?: number }]>
  /** The signed-in viewer's unread notifications (the header's count); one count query per page (GET), 0 on a POST. */
  readonly unread: number
}

/** Who may open a page. */
export type Access =
  /** Anyone, also under REQUIRE_SIGNIN_VIEW (sign-in and sign-up pages, errors). */
  | "public"
  /** Anyone who may view the site (REQUIRE_SIGNIN_VIEW: signed in). */
  | "view"
  /** Signed in only. */
  | "signed-in"

export interface RouteOptions {
  readonly access: Access
  /** Open to an account that must change its password first (the change page itself, sign-out). */
  readonly whileMustChangePassword?: boolean
  /**
   * A POST may be `multipart/form-data` (an upload): its body is left unread for the handler, which
   * must check the form's `_csrf` field (`csrfMatches`) before it keeps anything.
   */
  readonly multipart?: boolean
}

/** Whether a request's body is `multipart/form-data`. */
export const isMultipart = (request: HttpServerRequest.HttpServerRequest) =>
  /^multipart\/form-data\s*;/i.test(request.headers["content-type"] ?? "")

export type Form = URLSearchParams

type Handler = (ctx: WebContext, form: Form) => Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>

export interface PageOptions {
  readonly title: string
  readonly status?: number
  /** Extra elements of the page's head (a profile's `rel="me"` and ActivityPub links). */
  readonly head?: Html
}

/** A local path to go back to after signing in; anything else (another host, `//x`) is refused. */
export const safeRedirect = (value: string | null | undefined): string | undefined =>
  value !== null && value !== undefined && /^\/(?![/\\])/.test(value) && !/[\0-\x1f]/.test(value) ? value : undefined

const loginUrl = (ctx: WebContext) => {
  const back = ctx.url.pathname + ctx.url.search
  return back === "/" ? "/user/login" : `/user/login?redirect_to=${encodeURIComponent(back)}`
}

export const makeWeb = Effect.gen(function* () {
  const settings = yield* Settings
  const sessions = yield* Sessions
  const notifications = yield* NotificationsService
  const secure = settings.server.ROOT_URL.startsWith("https:")
  const origin = new URL(settings.server.ROOT_URL).origin
  const secret = settings.security.SECRET_KEY
  const cookieOptions = { path: "/", httpOnly: true, sameSite: "lax", secure } as const

  const csrfOf = (basis: string) => createHmac("sha256", secret).update(`csrf:${basis}`).digest("base64url")

  // The syntax highlighter (≈ 20 MB once loaded; its first step holds the event loop 0.2–0.4 s) is
  // warmed when the web interface is first used, in the background a moment after that first
  // page, so that a later file view does not pay for it — and a forge used only through the API
  // and git never loads it (infra/bench/README.md: RSS after 10,000 API requests).
  let highlighterWarming = false
  const warmHighlighter = Effect.suspend(() => {
    if (highlighterWarming) return Effect.void
    highlighterWarming = true
    return Effect.asVoid(
      Effect.forkDetach(
        Effect.sleep(HIGHLIGHTER_WARM_UP_DELAY).pipe(
          Effect.andThen(Effect.promise(() => highlighter.warmUp())),
          Effect.ignoreCause({ log: "Warn", message: "could not warm up the syntax highlighter" })
        )
      )
    )
  })

  /** The context of the current request: its session (if valid) and its CSRF token. */
  const context: Effect.Effect<WebContext, never, HttpServerRequest.HttpServerRequest> = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    yield* warmHighlighter
    const cookieId = request.cookies[SESSION_COOKIE]
    const session = cookieId === undefined ? undefined : Option.getOrUndefined(yield* sessions.resolve(cookieId))
    const viewer: Principal | undefined =
      session?.stage === "signed-in" ? { user: session.user, scopes: undefined, method: "password" } : undefined
    if (viewer !== undefined) setCaller(request, viewer)
    const cookies: WebContext["cookies"] = []
    let basis: string
    if (session !== undefined) basis = `session:${session.id}`
    else {
      let visitor = request.cookies[CSRF_COOKIE]
      if (visitor === undefined || !/^[A-Za-z0-9_-]{22,64}$/.test(visitor)) {
        visitor = randomBytes(24).toString("base64url")
        cookies.push([CSRF_COOKIE, visitor, {}])
      }
      basis = `visitor:${visitor}`
    }
    // A session cookie naming no valid session is cleared.
    if (cookieId !== undefined && session === undefined) cookies.push([SESSION_COOKIE, "", { maxAge: 0 }])
    return {
      request,
      url: new URL(request.url, origin),
      session,
      viewer,
      csrf: csrfOf(basis),
      settings,
      cookies,
      // Only a page shows the count: a form's POST (answered by a redirect) does not pay for it.
      unread:
        viewer === undefined || (request.method !== "GET" && request.method !== "HEAD")
          ? 0
          : yield* notifications.unreadCount(viewer)
    }
  })

  const withCookies = (ctx: WebContext, response: HttpServerResponse.HttpServerResponse) => {
    let out = response
    for (const [name, value, options] of ctx.cookies) {
      out = HttpServerResponse.setCookieUnsafe(out, name, value, {
        ...cookieOptions,
        ...(options.maxAge === undefined ? {} : { maxAge: `${options.maxAge} seconds` as const })
      })
    }
    return out
  }

  /** A whole page: the layout around `main`, with the security headers, compressed when accepted. */
  const page = (ctx: WebContext, options: PageOptions, main: Html) =>
    withCookies(
      ctx,
      htmlResponse(ctx.request, String(layout(ctx, options.title, main, options.head)), options.status ?? 200)
    )

  /**
   * A page sent while it is made (a long diff): the layout's start goes out at once, then each chunk
   * of `body` as it comes, in place of STREAM_MARK in `main`, then the layout's end; gzipped chunk
   * by chunk when the client accepts it (brotli or gzip: every browser takes gzip). A failure
   * half-way is logged and ends the page with a note.
   */
  const streamPage = (ctx: WebContext, options: PageOptions, main: Html, body: Stream.Stream<string>) => {
    const whole = String(layout(ctx, options.title, main, options.head))
    const at = whole.indexOf(STREAM_MARK)
    const [top, bottom] = at === -1 ? [whole, ""] : [whole.slice(0, at), whole.slice(at + STREAM_MARK.length)]
    const failed = (cause: Cause.Cause<unknown>) =>
      Stream.fromEffect(
        Effect.as(
          Effect.logError("web page failed while streaming", cause),
          '<div class="flash flash-error my-3" role="alert">Hearth could not show the rest of this page; the error has been logged.</div>'
        )
      )
    const chunks = Stream.concat(Stream.concat(Stream.make(top), Stream.catchCause(body, failed)), Stream.make(bottom))
    const gzip = encodingFor(ctx.request.headers["accept-encoding"]) !== undefined
    const bytes = Stream.encodeText(chunks)
    return withCookies(
      ctx,
      HttpServerResponse.stream(gzip ? gzipChunks(bytes) : bytes, {
        status: options.status ?? 200,
        contentType: "text/html; charset=utf-8",
        headers: {
          ...SECURITY_HEADERS,
          vary: "accept-encoding",
          ...(gzip ? { "content-encoding": "gzip" } : {})
        }
      })
    )
  }

  /** 303 after a form, 302 otherwise (Forgejo answers 303 to POSTs as well). */
  const redirect = (ctx: WebContext, location: string) =>
    withCookies(
      ctx,
      HttpServerResponse.empty({
        status: ctx.request.method === "POST" ? 303 : 302,
        headers: { ...SECURITY_HEADERS, location }
      })
    )

  const errorPage = (ctx: WebContext, status: number, title: string, message: string) =>
    page(
      ctx,
      { title, status },
      html`<div class="container-md p-responsive py-6 text-center">
        <h1 class="h1 mb-3">${status}</h1>
        <p class="f3 mb-2">${title}</p>
        <p class="color-fg-muted mb-4">${message}</p>
        <a class="btn" href="/">Go to the home page</a>
      </div>`
    )

  const notFound = (ctx: WebContext) =>
    errorPage(ctx, 404, "Page not found", "The page you asked for does not exist or you may not see it.")

  /** Signs `user` in on this response: a new session (a new id: never the one from before). */
  const openSession = (ctx: WebContext, user: UserRow, stage: "signed-in" | "two-factor") =>
    Effect.gen(function* () {
      if (ctx.session !== undefined) yield* sessions.end(ctx.session.id)
      const session = yield* sessions.open(user, stage)
      ctx.cookies.push([SESSION_COOKIE, session.id, {}])
      return session
    })

  /** Ends the session of this request and clears its cookie. */
  const endSession = (ctx: WebContext) =>
    Effect.gen(function* () {
      if (ctx.session !== undefined) yield* sessions.end(ctx.session.id)
      ctx.cookies.push([SESSION_COOKIE, "", { maxAge: 0 }])
    })

  const csrfMatches = (ctx: WebContext, sent: string | null) => {
    if (sent === null) return false
    const expected = Buffer.from(ctx.csrf)
    const given = Buffer.from(sent)
    return expected.length === given.length && timingSafeEqual(expected, given)
  }

  const readForm = (request: HttpServerRequest.HttpServerRequest) =>
    Effect.map(
      Effect.orElseSucceed(request.text, () => ""),
      (text) => {
        const type = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
        return type === "application/x-www-form-urlencoded" ? new URLSearchParams(text) : new URLSearchParams()
      }
    )

  /** An error a service answered, as a page (404 the styled not-found page); defects are logged, 500. */
  const failure = (ctx: WebContext, cause: Cause.Cause<unknown>) => {
    const outage = answerOutage(cause, `${settings.server.ROOT_URL}api/swagger`)
    if (outage !== undefined)
      return Effect.as(
        outage.pipe(Effect.ignore),
        errorPage(ctx, 503, "Service unavailable", "The database cannot be reached. Try again in a moment.")
      )
    const error = Cause.findErrorOption(cause)
    if (Option.isSome(error)) {
      const status = Errors.statusOf(error.value) ?? 500
      if (status === 404) return Effect.succeed(notFound(ctx))
      const message = (error.value as { message?: unknown }).message
      return Effect.succeed(
        errorPage(ctx, status, "Something went wrong", typeof message === "string" ? message : "An error occurred.")
      )
    }
    return Effect.as(
      Effect.logError("web page failed", cause),
      errorPage(ctx, 500, "Internal server error", "Hearth could not show this page; the error has been logged.")
    )
  }

  /** A route: the access rule, the CSRF check of a POST, and errors as pages. */
  const route = (method: "GET" | "POST", path: string, options: RouteOptions, handler: Handler) =>
    HttpRouter.route(
      method,
      path as HttpRouter.PathInput,
      Effect.gen(function* () {
        const ctx = yield* context
        const viewer = ctx.viewer
        if (viewer === undefined) {
          if (options.access === "signed-in" || (options.access === "view" && settings.service.REQUIRE_SIGNIN_VIEW)) {
            return redirect(ctx, loginUrl(ctx))
          }
        } else if (viewer.user.mustChangePassword && options.whileMustChangePassword !== true) {
          return redirect(ctx, "/user/change_password")
        }
        let form: Form = new URLSearchParams()
        if (method === "POST" && !(options.multipart === true && isMultipart(ctx.request))) {
          form = yield* readForm(ctx.request)
          if (!csrfMatches(ctx, form.get("_csrf"))) {
            return errorPage(
              ctx,
              400,
              "Bad request",
              "The form's security token (CSRF) is missing or out of date. Go back, reload the page and try again."
            )
          }
        }
        return yield* handler(ctx, form).pipe(Effect.catchCause((cause) => failure(ctx, cause)))
      })
    )

  return {
    settings,
    context,
    page,
    streamPage,
    redirect,
    errorPage,
    notFound,
    openSession,
    endSession,
    route,
    loginUrl,
    csrfMatches
  }
})

export type Web = Effect.Success<typeof makeWeb>
