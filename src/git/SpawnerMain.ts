// The entry of the process that starts git for the server (src/git/Spawner.ts).
import { serve } from "./Spawner.ts"

serve()
