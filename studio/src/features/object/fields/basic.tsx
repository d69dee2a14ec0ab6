// The inputs of the plain data types: text (String, TextRef), numbers in
// the studio's notation (Integer, Decimal, Float), Boolean, date-time and
// date. Each keeps what the editor types and reports the parsed value.
import { useEffect, useState } from "preact/hooks";
import { locale, messages } from "../../../i18n/i18n";
import { useStore } from "../../../store";
import { formatNumberInput, fromLocalInput, parseNumberInput, toDateInput, toLocalInput } from "../localized";
import { registerField, type FieldProps } from "./registry";

const m = messages({
  en: { notNumber: "Not a number: write it like {example}.", notInteger: "A whole number, please.", yes: "Yes" },
  de: { notNumber: "Keine Zahl: schreiben Sie sie wie {example}.", notInteger: "Bitte eine ganze Zahl.", yes: "Ja" },
});

const aria = (p: FieldProps, own?: string) => ({
  id: p.id,
  disabled: p.disabled,
  "aria-invalid": p.invalid || !!own ? true : undefined,
  "aria-describedby": [p.describedBy, own ? `${p.id}-local` : undefined].filter(Boolean).join(" ") || undefined,
});

function Text(p: FieldProps) {
  const v = typeof p.value === "string" ? p.value : p.value === undefined || p.value === null ? "" : String(p.value);
  return <input class="input" type="text" value={v} {...aria(p)} onInput={(e) => p.onChange(e.currentTarget.value)} />;
}

function LongText(p: FieldProps) {
  const v = typeof p.value === "string" ? p.value : "";
  return <textarea class="input" rows={4} value={v} {...aria(p)} onInput={(e) => p.onChange(e.currentTarget.value)} />;
}

function NumberInput(p: FieldProps & { integer: boolean }) {
  const l = useStore(locale);
  const [text, setText] = useState(() => formatNumberInput(p.value, l));
  const [own, setOwn] = useState<string | undefined>();
  // A value changed from outside (a restored draft, a resolved conflict, the language) is shown anew.
  useEffect(() => {
    const parsed = parseNumberInput(text, l);
    if (parsed !== p.value && !(parsed === null && (p.value === undefined || p.value === null))) {
      setText(formatNumberInput(p.value, l));
      setOwn(undefined);
    }
  }, [p.value, l]);
  const change = (t: string) => {
    setText(t);
    const n = parseNumberInput(t, l);
    if (n !== null && Number.isNaN(n)) setOwn(m("notNumber", { example: formatNumberInput(p.integer ? 1234 : 1234.5, l) }));
    else if (n !== null && p.integer && !Number.isInteger(n)) setOwn(m("notInteger"));
    else {
      setOwn(undefined);
      p.onChange(n);
    }
  };
  return (
    <>
      <input class="input" type="text" inputMode={p.integer ? "numeric" : "decimal"} value={text} {...aria(p, own)}
        onInput={(e) => change(e.currentTarget.value)} />
      {own && <div class="field-error" id={`${p.id}-local`}>{own}</div>}
    </>
  );
}

function Bool(p: FieldProps) {
  return (
    <span class="checkbox">
      <input type="checkbox" checked={p.value === true} {...aria(p)} onChange={(e) => p.onChange(e.currentTarget.checked)} />
      <span aria-hidden="true">{m("yes")}</span>
    </span>
  );
}

function DateTimeInput(p: FieldProps) {
  return <input class="input" type="datetime-local" value={toLocalInput(p.value)} {...aria(p)} onInput={(e) => p.onChange(fromLocalInput(e.currentTarget.value))} />;
}

function DateInput(p: FieldProps) {
  return <input class="input" type="date" value={toDateInput(p.value)} {...aria(p)} onInput={(e) => p.onChange(e.currentTarget.value || null)} />;
}

const is = (...names: string[]) => (dt: string) => names.some((n) => dt === n || dt.startsWith(n + "."));
registerField(is("String"), async () => Text);
registerField(is("TextRef"), async () => LongText);
const IntegerInput = (p: FieldProps) => <NumberInput {...p} integer={true} />;
const DecimalInput = (p: FieldProps) => <NumberInput {...p} integer={false} />;
registerField((dt) => dt === "Integer", async () => IntegerInput);
registerField((dt) => dt === "Decimal" || dt === "Float", async () => DecimalInput);
registerField((dt) => dt === "Boolean", async () => Bool);
registerField((dt) => dt === "DateTime", async () => DateTimeInput);
registerField((dt) => dt === "DateTime.Date", async () => DateInput);
