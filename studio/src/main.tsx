import { render } from "preact";
import { App } from "./App";
import { locale } from "./i18n/i18n";

document.documentElement.lang = locale.get();
const root = document.getElementById("app");
if (root) render(<App />, root);
