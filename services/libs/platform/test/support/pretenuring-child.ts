// Makes arrays on one line of code and keeps every one alive across many young-generation
// collections: what leads V8 to allocate that line's arrays in the old generation from then on. With
// the argument "tuned", it first calls turnOffAllocationSitePretenuring. Run it with
// --trace-pretenuring-statistics, which prints each decision.
import { turnOffAllocationSitePretenuring } from "../../src/heap-tuning.js";

if (process.argv[2] === "tuned") turnOffAllocationSitePretenuring();
const kept: number[][] = [];
const triple = (i: number) => [i, i + 1, i + 2];
for (let round = 0; round < 40; round++) {
  for (let i = 0; i < 50_000; i++) kept.push(triple(i));
}
console.log(`kept ${kept.length}`);
