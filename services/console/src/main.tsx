import { render } from "preact";
import { App } from "./app.tsx";
import "uplot/dist/uPlot.min.css";
import "./style.css";

render(<App />, document.getElementById("app")!);
