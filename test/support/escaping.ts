// What HTML escaping must leave out of a page made with hostile text (the XSS corpus): the page's
// real tags, their quoted values emptied (escaping keeps a value inside its quotes, and `<` in
// text is `&lt;`), checked for elements, event handlers and script URLs Hearth never writes.
// Hearth's own: the one htmx script, the icon and stylesheet links (and a profile's `rel="me"` and
// ActivityPub links), octicons and avatars as inline SVG, and a QR code image as an SVG data: URL.
export const executable = (page: string): ReadonlyArray<string> => {
  const found: Array<string> = []
  const tags = page.match(/<[a-zA-Z][^>]*>/g) ?? []
  const named = (name: string) => tags.filter((t) => new RegExp(`^<${name}[\\s>/]`, "i").test(t)).length
  if (named("script") !== 1) found.push("a script element besides htmx")
  for (const name of ["iframe", "object", "embed", "math", "base", "style", "video", "audio", "frame", "meta http"]) {
    if (named(name) > 0) found.push(`a ${name} element`)
  }
  for (const tag of tags) {
    const bare = tag.replace(/"[^"]*"/g, '""')
    if (/\son[a-z]+\s*=/i.test(bare)) found.push(`an event handler: ${tag}`)
    if (/\s(?:style|srcdoc|formaction)\s*=/i.test(bare)) found.push(`a forbidden attribute: ${tag}`)
    const url = /\s(?:href|src|action|data|srcset|xlink:href)\s*=\s*"\s*([^"]*)"/i.exec(tag)?.[1] ?? ""
    if (/^(?:javascript|vbscript|data):/i.test(url) && !/^data:image\/svg\+xml;base64,/.test(url))
      found.push(`a script URL: ${tag}`)
    if (/^<img/i.test(tag) && !/^data:image\/svg\+xml;base64,/.test(url)) found.push(`an image: ${tag}`)
    if (/^<svg/i.test(tag) && !/^<svg class="(?:octicon|avatar)/.test(tag)) found.push(`a foreign svg: ${tag}`)
    if (/^<link/i.test(tag) && !/^<link rel="(?:icon|stylesheet|me|alternate)"/.test(tag)) found.push(`a link: ${tag}`)
  }
  return found
}
