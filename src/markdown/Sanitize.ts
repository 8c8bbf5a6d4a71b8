// The second stage: an allow-list over the HTML marked produced (which includes any raw HTML the
// author wrote). Only formatting survives: no scripts, styles, frames, forms, event handlers or
// style attributes; links only to http(s), mailto and relative targets; `data:` only for raster
// images. Links get rel="nofollow" (and "noopener" when they leave this server); ids are
// prefixed `user-content-` so a document cannot take over the page's own ids.
import sanitizeHtml from "sanitize-html"

const DATA_IMAGE = /^data:image\/(?:png|gif|jpe?g|webp|avif);base64,[a-z0-9+/=\s]*$/i

/** The rel of a link: "nofollow", and "noopener" too when it leaves `appUrl`'s server. */
export const relFor = (appUrl: string) => {
  const ownOrigin = new URL(appUrl).origin
  return (href: string): string => {
    if (!/^(?:[a-z][a-z0-9+.-]*:|\/\/)/i.test(href)) return "nofollow"
    try {
      return new URL(href, appUrl).origin !== ownOrigin ? "nofollow noopener" : "nofollow"
    } catch {
      return "nofollow noopener"
    }
  }
}

/**
 * Whether a URL written in markdown may be used as is: relative, http(s), mailto, or (for an
 * image) a raster `data:` image. Checked as a browser reads it: character references decoded,
 * control characters and whitespace dropped, any case.
 */
export const isSafeUrl = (url: string, image: boolean): boolean => {
  const plain = url
    .replace(/&#x([0-9a-f]+);?/gi, (_m, h: string) => String.fromCodePoint(Math.min(parseInt(h, 16), 0x10ffff)))
    .replace(/&#(\d+);?/g, (_m, d: string) => String.fromCodePoint(Math.min(Number(d), 0x10ffff)))
    .replace(/&(?:colon|tab|newline);?/gi, (m) => (m[1]!.toLowerCase() === "c" ? ":" : ""))
    .replace(/[\u0000-\u0020\u007f-\u009f]/g, "")
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(plain)?.[1]?.toLowerCase()
  if (scheme === undefined) return true
  if (scheme === "http" || scheme === "https" || scheme === "mailto") return true
  return image && scheme === "data" && DATA_IMAGE.test(plain)
}

/** How relative URLs in raw HTML resolve (the render's context), for one sanitize call. */
export interface UrlResolver {
  readonly link: (href: string) => string
  readonly media: (src: string) => string
}

const asIs: UrlResolver = { link: (href) => href, media: (src) => src }

export const makeSanitizer = (appUrl: string) => {
  const rel = relFor(appUrl)
  let resolver = asIs

  const prefixId = (attribs: Record<string, string>) => {
    const id = attribs["id"]
    if (id !== undefined && !id.startsWith("user-content-")) attribs["id"] = `user-content-${id}`
    return attribs
  }

  const options: sanitizeHtml.IOptions = {
    allowedTags: [
      "h1",
      "h2",
      "h3",
      "h4",
      "h5",
      "h6",
      "p",
      "br",
      "hr",
      "blockquote",
      "pre",
      "code",
      "kbd",
      "samp",
      "var",
      "em",
      "strong",
      "b",
      "i",
      "u",
      "s",
      "del",
      "ins",
      "strike",
      "sub",
      "sup",
      "small",
      "mark",
      "abbr",
      "q",
      "cite",
      "ul",
      "ol",
      "li",
      "dl",
      "dt",
      "dd",
      "table",
      "thead",
      "tbody",
      "tfoot",
      "tr",
      "th",
      "td",
      "caption",
      "a",
      "img",
      "input",
      "details",
      "summary",
      "span",
      "div",
      "section",
      "picture",
      "source",
      "ruby",
      "rt",
      "rp"
    ],
    allowedAttributes: {
      a: ["href", "title", "id", "class", "rel"],
      img: ["src", "alt", "title", "width", "height", "align"],
      source: ["srcset", "media", "type"],
      input: ["type", "checked", "disabled"],
      ol: ["start", "type"],
      li: ["id", "value"],
      th: ["align", "colspan", "rowspan"],
      td: ["align", "colspan", "rowspan"],
      code: ["class"],
      span: ["class", "aria-label"],
      blockquote: ["class"],
      strong: ["class"],
      section: ["class"],
      details: ["open"],
      abbr: ["title"],
      h1: ["id"],
      h2: ["id"],
      h3: ["id"],
      h4: ["id"],
      h5: ["id"],
      h6: ["id"],
      sup: ["id"],
      div: ["align"],
      p: ["align"]
    },
    allowedClasses: {
      code: ["language-*"],
      a: ["mention", "ref-issue", "commit"],
      span: ["emoji"],
      blockquote: [
        "attention-header",
        "attention-note",
        "attention-tip",
        "attention-important",
        "attention-warning",
        "attention-caution"
      ],
      strong: ["attention-note", "attention-tip", "attention-important", "attention-warning", "attention-caution"],
      section: ["footnotes"]
    },
    allowedSchemes: ["http", "https", "mailto"],
    allowedSchemesByTag: { img: ["http", "https", "data"], source: ["http", "https"] },
    allowedSchemesAppliedToAttributes: ["href", "src", "cite", "srcset"],
    allowProtocolRelative: true,
    allowedIframeHostnames: [],
    disallowedTagsMode: "discard",
    transformTags: {
      a: (tagName, attribs) => {
        if (attribs["href"] !== undefined) attribs["href"] = resolver.link(attribs["href"])
        const href = attribs["href"]
        if (href !== undefined) attribs["rel"] = rel(href)
        else delete attribs["rel"]
        return { tagName, attribs: prefixId(attribs) }
      },
      img: (tagName, attribs) => {
        if (attribs["src"] !== undefined) attribs["src"] = resolver.media(attribs["src"])
        const src = attribs["src"]
        if (src !== undefined && /^\s*data:/i.test(src) && !DATA_IMAGE.test(src.trim())) delete attribs["src"]
        return { tagName, attribs }
      },
      // A task list's checkboxes are shown, never edited; no other input survives.
      input: (tagName, attribs) => {
        if ((attribs["type"] ?? "").toLowerCase() !== "checkbox") return { tagName: "span", attribs: {} }
        const out: Record<string, string> = { type: "checkbox", disabled: "" }
        if (attribs["checked"] !== undefined) out["checked"] = ""
        return { tagName, attribs: out }
      },
      h1: (tagName, attribs) => ({ tagName, attribs: prefixId(attribs) }),
      h2: (tagName, attribs) => ({ tagName, attribs: prefixId(attribs) }),
      h3: (tagName, attribs) => ({ tagName, attribs: prefixId(attribs) }),
      h4: (tagName, attribs) => ({ tagName, attribs: prefixId(attribs) }),
      h5: (tagName, attribs) => ({ tagName, attribs: prefixId(attribs) }),
      h6: (tagName, attribs) => ({ tagName, attribs: prefixId(attribs) }),
      li: (tagName, attribs) => ({ tagName, attribs: prefixId(attribs) }),
      sup: (tagName, attribs) => ({ tagName, attribs: prefixId(attribs) })
    }
  }
  return (html: string, urls: UrlResolver = asIs): string => {
    resolver = urls
    try {
      return sanitizeHtml(html, options)
    } finally {
      resolver = asIs
    }
  }
}
