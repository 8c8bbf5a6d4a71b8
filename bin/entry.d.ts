/** Which code `hearth` runs (bin/entry.js): the bundle while it is up to date, else the sources. */
export declare const chooseEntry: (root?: string) => { readonly entry: string; readonly stale: boolean }
