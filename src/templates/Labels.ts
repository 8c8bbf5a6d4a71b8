// Issue label sets offered when a repository is created (`issue_labels`) and served by
// GET /label/templates: Forgejo's `LabelTemplate` (name, 6-hex color without "#", description,
// exclusive). "Default" is a small flat set; "Advanced" uses scoped labels ("Kind/Bug"), where
// `exclusive` means an issue carries at most one label of that scope.

export interface LabelTemplate {
  readonly name: string
  readonly color: string
  readonly description: string
  readonly exclusive: boolean
}

const label = (name: string, color: string, description: string, exclusive = false): LabelTemplate => ({
  name,
  color,
  description,
  exclusive
})

export const labelSets: Readonly<Record<string, ReadonlyArray<LabelTemplate>>> = {
  Advanced: [
    label("Kind/Bug", "ee0701", "Something does not work as intended", true),
    label("Kind/Feature", "0288d1", "A new capability", true),
    label("Kind/Enhancement", "84b6eb", "An improvement to something that already exists", true),
    label("Kind/Security", "9c27b0", "A vulnerability or a hardening measure", true),
    label("Kind/Testing", "795548", "Tests and test infrastructure", true),
    label("Kind/Breaking", "c62828", "Changes behaviour that users rely on", true),
    label("Kind/Documentation", "37474f", "Documentation only", true),
    label("Reviewed/Duplicate", "616161", "Already reported elsewhere", true),
    label("Reviewed/Invalid", "546e7a", "Not a problem, or not enough to act on", true),
    label("Reviewed/Confirmed", "795548", "Reproduced and accepted", true),
    label("Reviewed/Won't Fix", "eeeeee", "Will not be worked on", true),
    label("Status/Need More Info", "424242", "Waiting for details from the reporter", true),
    label("Status/Blocked", "880e4f", "Cannot go on until something else is done", true),
    label("Status/Abandoned", "222222", "Work stopped and is not expected to resume", true),
    label("Priority/Critical", "b71c1c", "Needs attention now", true),
    label("Priority/High", "d32f2f", "Should be done soon", true),
    label("Priority/Medium", "e64a19", "Normal priority", true),
    label("Priority/Low", "4caf50", "Can wait", true)
  ],
  Default: [
    label("bug", "ee0701", "Something does not work as intended"),
    label("duplicate", "cccccc", "Already reported elsewhere"),
    label("enhancement", "84b6eb", "A new feature or an improvement"),
    label("help wanted", "128a0c", "Contributions are welcome"),
    label("invalid", "e6e6e6", "Not a problem, or not enough to act on"),
    label("question", "cc317c", "Needs an answer rather than a change"),
    label("wontfix", "ffffff", "Will not be worked on")
  ]
}
