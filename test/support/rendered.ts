// What HTML escaping must leave out of a page that shows rendered markdown made from hostile text
// (release notes, wiki pages): like ./escaping.ts, but a sanitized image (`<img src="https://…">`),
// the icons of markdown alerts (`<svg class="svg octicon-…">`) and forms posting to the page's own
// site are Hearth's, and so are its two scripts (htmx and the copy button's).
export const executableInRendered = (page: string): ReadonlyArray<string> => {
  const found: Array<string> = []
  const tags = page.match(/<[a-zA-Z][^>]*>/g) ?? []
  for (const tag of tags) {
    const name = /^<([a-zA-Z0-9]+)/.exec(tag)![1]!.toLowerCase()
    if (name === "script" && !/^<script src="\/assets\/(?:htmx|copy)\.[0-9a-f]{16}\.js" defer>$/.test(tag))
      found.push(`a script: ${tag}`)
    if (["iframe", "object", "embed", "math", "base", "style", "video", "audio", "frame", "form"].includes(name)) {
      if (!(name === "form" && /\smethod="(?:post|get)"/.test(tag) && /\saction="\/[^"]*"/.test(tag)))
        found.push(`a ${name} element: ${tag}`)
    }
    const bare = tag.replace(/"[^"]*"/g, '""')
    if (/\son[a-z]+\s*=/i.test(bare)) found.push(`an event handler: ${tag}`)
    if (/\s(?:style|srcdoc|formaction)\s*=/i.test(bare)) found.push(`a forbidden attribute: ${tag}`)
    if (/(?:href|src|action|data|srcset|xlink:href)\s*=\s*["']?\s*(?:javascript|vbscript|data):/i.test(tag))
      found.push(`a script URL: ${tag}`)
    if (name === "svg" && !/^<svg class="(?:octicon|avatar|svg octicon-)/.test(tag)) found.push(`a foreign svg: ${tag}`)
    if (name === "meta" && /http-equiv/i.test(tag)) found.push(`a meta refresh: ${tag}`)
    if (name === "link" && !/^<link rel="(?:icon|stylesheet)"/.test(tag)) found.push(`a link: ${tag}`)
  }
  return found
}
