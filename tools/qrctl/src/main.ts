import { Command, CommanderError } from "commander";
import { registerAccounts } from "./commands/accounts.js";
import { registerDomains } from "./commands/domains.js";
import { registerKeys } from "./commands/keys.js";
import { registerPlans } from "./commands/plans.js";
import { registerQrCodes } from "./commands/qr-codes.js";
import { registerWebhooks } from "./commands/webhooks.js";
import { CliError, describeRpcFailure, EXIT_FAILURE, EXIT_USAGE, RpcFailure } from "./errors.js";

/**
 * The qrctl command tree. Each command group lives in its own file under commands/ and registers
 * itself here; a new group (such as `domains`) is one file and one line.
 */
export function buildProgram(): Command {
  const program = new Command("qrctl")
    .description(
      "Administer qr-platform: accounts, plans, API keys, custom domains and an account's webhooks; import and export an account's QR codes.",
    )
    .addHelpText(
      "after",
      "\nThe admin credential comes from --address and --token, else QRCTL_ADDRESS and QRCTL_TOKEN,\n" +
        "else $DATA_DIR/admin.json (DATA_DIR defaults to .data), which `npm start` writes.\n" +
        "Where tenancy and links listen on ports of their own (deploy/local/run-services.sh), give each\n" +
        "its address with --tenancy-address and --links-address, or QRCTL_TENANCY_ADDRESS and\n" +
        "QRCTL_LINKS_ADDRESS; each defaults to --address, then QRCTL_ADDRESS.",
    )
    .option("--address <url>", "gRPC address of the platform, such as http://127.0.0.1:9090")
    .option("--tenancy-address <url>", "gRPC address of the tenancy service (accounts, plans, keys), if not --address")
    .option("--links-address <url>", "gRPC address of the links service (custom domains), if not --address")
    .option("--token <token>", "admin credential (prefer QRCTL_TOKEN: flags are visible to other local users)")
    .option(
      "--api-url <url>",
      "REST API base URL for the commands that act as an account (qr-codes, webhooks) (default http://127.0.0.1:8080/api/v1)",
    )
    .option("--api-key <key>", "an account's API key for the qr-codes and webhooks commands (prefer QRCTL_API_KEY)")
    .option("--json", "print exactly one JSON object on stdout instead of text")
    // Errors are reported and turned into exit codes by run(), not by commander calling process.exit.
    .exitOverride();

  registerAccounts(program);
  registerPlans(program);
  registerKeys(program);
  registerDomains(program);
  registerQrCodes(program);
  registerWebhooks(program);
  return program;
}

/** Runs qrctl with the arguments after the program name and returns the exit code. */
export async function run(args: readonly string[]): Promise<number> {
  try {
    await buildProgram().parseAsync([...args], { from: "user" });
    return 0;
  } catch (error) {
    // Commander has already printed its message (or the help text it was asked for).
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : EXIT_USAGE;
    if (error instanceof CliError) {
      process.stderr.write(`error: ${error.message}\n`);
      return error.exitCode;
    }
    if (error instanceof RpcFailure) {
      process.stderr.write(`error: ${describeRpcFailure(error)}\n`);
      return EXIT_FAILURE;
    }
    throw error;
  }
}
