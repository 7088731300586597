// Loaded before every test file (vitest.config.ts setupFiles): undoes what the file's helpers made.
import { afterAll } from "vitest";
import { runFileEnd } from "../helpers/file-end.js";

afterAll(runFileEnd);
