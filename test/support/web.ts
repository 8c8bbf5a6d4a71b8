// A browser-like HTTP client for the web pages, without a browser: it keeps cookies, reads a page's
// CSRF token and submits forms (application/x-www-form-urlencoded), following no redirect itself.

export interface WebResponse {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  /** `location` of a redirect, as a path. */
  readonly location: string | undefined
}

/** The value of the first `_csrf` field of a page. */
export const csrfOf = (html: string): string => {
  const found = /name="_csrf" value="([^"]+)"/.exec(html)
  if (found === null) throw new Error("no CSRF field on the page")
  return found[1]!
}

export class WebClient {
  readonly cookies = new Map<string, string>()
  base: string
  constructor(base: string) {
    this.base = base
  }

  private remember(headers: Headers) {
    for (const line of headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";")
      const eq = pair!.indexOf("=")
      const name = pair!.slice(0, eq).trim()
      const value = pair!.slice(eq + 1).trim()
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === ""
      if (expired) this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
  }

  private cookieHeader(): Record<string, string> {
    if (this.cookies.size === 0) return {}
    return { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ") }
  }

  async request(method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}) {
    const res = await fetch(`${this.base}${path}`, {
      method,
      redirect: "manual",
      headers: { ...this.cookieHeader(), ...init.headers },
      ...(init.body === undefined ? {} : { body: init.body })
    })
    this.remember(res.headers)
    const location = res.headers.get("location") ?? undefined
    return {
      status: res.status,
      headers: res.headers,
      text: await res.text(),
      location: location === undefined ? undefined : location.replace(this.base, "")
    } satisfies WebResponse
  }

  get(path: string) {
    return this.request("GET", path)
  }

  /** POSTs `fields` as a form; `_csrf` is added from `csrf` unless `csrf` is undefined. */
  post(path: string, fields: Record<string, string>, csrf: string | undefined) {
    const body = new URLSearchParams({ ...fields, ...(csrf === undefined ? {} : { _csrf: csrf }) }).toString()
    return this.request("POST", path, { body, headers: { "content-type": "application/x-www-form-urlencoded" } })
  }

  /** Opens `page`, takes its CSRF token and submits `fields` to `action` (default: the page itself). */
  async submit(page: string, fields: Record<string, string>, action = page.split("?")[0]!) {
    const shown = await this.get(page)
    return this.post(action, fields, csrfOf(shown.text))
  }

  /** Signs in with the login form; the response is the form's answer (a redirect when it worked). */
  signIn(login: string, password = "password123") {
    return this.submit("/user/login", { user_name: login, password })
  }
}

/** A client signed in as `login` through the login form (fails the test when the form does not redirect). */
export const signedIn = async (base: string, login: string, password = "password123") => {
  const client = new WebClient(base)
  const res = await client.signIn(login, password)
  if (res.status !== 303) throw new Error(`signing in as ${login}: ${res.status}`)
  return client
}
