// The few rules the repository pages need beyond Primer's classes: code and diff tables (line
// numbers, the anchored line, added and deleted lines in Primer's own diff colours), the branch
// menu's height and the languages bar; links inside rendered text underlined (in dark mode Primer's
// link colour alone is too close to the text's: axe's link-in-text-block). Served in the one stylesheet (Assets.ts).
export const REPO_CSS = `
.hearth-repo-head { border-bottom: 1px solid var(--borderColor-muted); background: var(--bgColor-muted); }
.hearth-repo-tabs { box-shadow: none; }
.hearth-ref-list { max-height: 60vh; overflow-y: auto; min-width: 16rem; }
.hearth-hook-pre { white-space: pre-wrap; word-break: break-all; max-height: 24rem; overflow: auto; }
.hearth-hook-types { z-index: 99; min-width: 14rem; }
.hearth-files td { padding: 6px 12px; border-top: 1px solid var(--borderColor-muted); vertical-align: top; }
.hearth-files tr:first-child td { border-top: 0; }
.hearth-files .hearth-files-name { width: 30%; }
.hearth-files .hearth-files-date { width: 1%; white-space: nowrap; text-align: right; }
.hearth-code-box { overflow-x: auto; }
.hearth-code { width: 100%; border-collapse: collapse; font-family: var(--fontStack-monospace); font-size: 12px; line-height: 20px; tab-size: 4; }
.hearth-code td { padding: 0 10px; vertical-align: top; }
.hearth-code .hearth-num { width: 1%; min-width: 50px; text-align: right; white-space: nowrap; user-select: none; color: var(--fgColor-muted); }
.hearth-code .hearth-num a { color: inherit; }
.hearth-code .hearth-text { white-space: pre; }
.hearth-code .hearth-sign { width: 1%; padding: 0 2px; user-select: none; }
.hearth-code tr:target td { background: var(--bgColor-attention-muted); }
.hearth-code .hearth-add td, .hearth-code td.hearth-add-cell { background: var(--diffBlob-additionLine-bgColor); color: var(--diffBlob-additionLine-fgColor); }
.hearth-code .hearth-add .hearth-num, .hearth-code .hearth-num.hearth-add-cell { background: var(--diffBlob-additionNum-bgColor); color: var(--diffBlob-additionNum-fgColor); }
.hearth-code .hearth-del td, .hearth-code td.hearth-del-cell { background: var(--diffBlob-deletionLine-bgColor); color: var(--diffBlob-deletionLine-fgColor); }
.hearth-code .hearth-del .hearth-num, .hearth-code .hearth-num.hearth-del-cell { background: var(--diffBlob-deletionNum-bgColor); color: var(--diffBlob-deletionNum-fgColor); }
.hearth-code td.hearth-empty-cell { background: var(--diffBlob-emptyLine-bgColor); }
.hearth-code .hearth-hunk td { background: var(--diffBlob-hunkLine-bgColor); color: var(--fgColor-muted); }
.hearth-split .hearth-text { width: 50%; white-space: pre-wrap; word-break: break-all; }
.hearth-blame .hearth-blame-commit { width: 1%; min-width: 240px; max-width: 320px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; font-family: var(--fontStack-sansSerif); border-right: 1px solid var(--borderColor-muted); }
.hearth-blame .hearth-blame-first td { border-top: 1px solid var(--borderColor-muted); }
.hearth-langbar { display: block; border-radius: 6px; overflow: hidden; }
.hearth-clone input { font-size: 12px; }
.hearth-image { max-width: 100%; }
.markdown-body p a, .markdown-body li a, .markdown-body td a { text-decoration: underline; text-underline-offset: .2rem; }
.hearth-commit-message { white-space: pre-wrap; font-family: var(--fontStack-monospace); font-size: 12px; }
.hearth-diff-file { position: relative; }
.hearth-diff-file > .hearth-diff-controls { position: absolute; top: 0; right: 0; z-index: 1; }
.hearth-diff-file > details > summary { padding-right: 13rem; cursor: pointer; }
.hearth-add-comment { opacity: 0; font-weight: bold; }
.hearth-code tr:hover .hearth-add-comment, .hearth-add-comment:focus { opacity: 1; }
.hearth-code .hearth-line-extra td { padding: 4px 8px; white-space: normal; font-family: var(--fontStack-sansSerif); font-size: 14px; line-height: 1.5; }
.hearth-review-box { width: 28rem; max-width: 90vw; z-index: 100; }
.hearth-conversation textarea.form-control { min-height: 0; height: 4.5rem; }
`
