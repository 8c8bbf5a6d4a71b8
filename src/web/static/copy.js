// The copy buttons of the web pages (clone URLs): a button with `data-copy="<id>"` copies the value
// of the input with that id. Served as a static asset (the pages' CSP allows no inline script);
// without JavaScript the input stays selectable by hand.
document.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("button[data-copy]") : null
  if (button === null) return
  const input = document.getElementById(button.getAttribute("data-copy") ?? "")
  if (!(input instanceof HTMLInputElement)) return
  const done = (text) => {
    const label = button.querySelector("[data-copy-label]")
    if (label === null) return
    const before = label.textContent
    label.textContent = text
    setTimeout(() => {
      label.textContent = before
    }, 1500)
  }
  const fallback = () => {
    input.select()
    done("Select and copy")
  }
  if (navigator.clipboard === undefined) return fallback()
  navigator.clipboard.writeText(input.value).then(() => done("Copied"), fallback)
})
