// The REST suite with every service and the edge as separate processes talking real gRPC.
// With DATABASE_URL set, all of them share a fresh Postgres database.
import { defineRestSuite } from "./support/rest-suite.js";

defineRestSuite("processes");
