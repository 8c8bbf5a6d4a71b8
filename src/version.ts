// The running version: package.json's, read once at start.
import { PACKAGE_JSON } from "./lib/PackageRoot.ts"

export const VERSION: string = PACKAGE_JSON.version
