/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { formatNumberInput, fromLocalInput, parseNumberInput, toDateInput, toLocalInput } from "./localized";

test("numbers in German and English notation", () => {
  assert.equal(parseNumberInput("1.234,5", "de"), 1234.5);
  assert.equal(parseNumberInput("1234,5", "de"), 1234.5);
  assert.equal(parseNumberInput("-7", "de"), -7);
  assert.equal(parseNumberInput("1,234.5", "en"), 1234.5);
  assert.equal(parseNumberInput("1234.5", "en"), 1234.5);
  assert.equal(parseNumberInput("", "de"), null);
  assert.ok(Number.isNaN(parseNumberInput("1.234.5", "en")));
  assert.ok(Number.isNaN(parseNumberInput("12,34", "en")));
  assert.ok(Number.isNaN(parseNumberInput("abc", "de")));
  assert.equal(formatNumberInput(1234.5, "de"), "1.234,5");
  assert.equal(formatNumberInput(1234.5, "en"), "1,234.5");
  assert.equal(formatNumberInput(undefined, "en"), "");
  assert.equal(parseNumberInput(formatNumberInput(-98765.4321, "de"), "de"), -98765.4321);
});

test("date-times round-trip through the local input; dates keep the day", () => {
  const iso = "2025-06-15T10:30:00Z";
  assert.equal(fromLocalInput(toLocalInput(iso)), iso);
  assert.equal(fromLocalInput(""), null);
  assert.equal(toLocalInput("not a date"), "");
  assert.equal(toDateInput("2025-06-15"), "2025-06-15");
  assert.equal(toDateInput(5), "");
});
