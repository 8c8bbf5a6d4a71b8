#!/usr/bin/env node
// The `hearth` command. Node runs the TypeScript sources directly (type stripping).
import "../src/cli.ts"
