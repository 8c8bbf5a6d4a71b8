// Reading Forgejo's query-string switches.

/**
 * Go's strconv.ParseBool as Forgejo's forms read it: `undefined` when absent or empty, true for
 * 1/t/T/true/TRUE/True, false for anything else.
 */
export const parseFormBool = (value: string | undefined): boolean | undefined =>
  value === undefined || value === "" ? undefined : ["1", "t", "T", "true", "TRUE", "True"].includes(value)
