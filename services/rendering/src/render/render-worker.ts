// The entry file of a render pool thread: piscina calls its default export with each task.
export { draw as default } from "./draw.js";
