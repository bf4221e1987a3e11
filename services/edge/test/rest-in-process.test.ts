// The REST suite with every service in this process behind in-process transports.
import { defineRestSuite } from "./support/rest-suite.js";

defineRestSuite("in-process");
