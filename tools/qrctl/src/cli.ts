// qrctl as a process: runs the command line and exits with its status.
import { run } from "./main.js";

process.exitCode = await run(process.argv.slice(2));
