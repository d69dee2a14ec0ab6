// The field registry: which input edits a value of which data type
// (attribute 1001). Each field module registers itself (fields/all.ts
// imports them all); the object editor asks fieldFor(dataType). Heavy
// inputs (the rich-text editor) register a loader so their code is fetched
// only when such a field is shown.
import type { ComponentType } from "preact";
import type { CmsObject } from "../../../api/generated/management";

/** AttributeInfo is what a field needs to know of its attribute definition. */
export interface AttributeInfo {
  id: number;
  apiIdentifier?: string | undefined;
  name: string;
  /** attributeDataType (1001), e.g. "String", "Integer", "ObjRef", "XmlRef.SimpleHtml". */
  dataType: string;
  languageDependent: boolean;
  multiple: boolean;
  required: boolean;
  /** Referenced object types (1015) of an ObjRef/BinRef attribute. */
  targetTypes: number[];
  /** The type whose objects are this attribute's variants (1002); 0: no variants. */
  variantAxis: number;
  /** The attribute definition itself. */
  object?: CmsObject | undefined;
}

/** FieldProps: one value (one attribute, language, variant) being edited. */
export interface FieldProps {
  /** The control's id (a <label for> names it). */
  id: string;
  label: string;
  attr: AttributeInfo;
  branch: string;
  /** The value as CMS sends it (string, number, boolean, id); undefined = unset. */
  value: unknown;
  onChange: (v: unknown) => void;
  disabled?: boolean;
  /** The id of the element describing an error, for aria-describedby. */
  describedBy?: string | undefined;
  invalid?: boolean;
}

export type FieldComponent = ComponentType<FieldProps>;

/** ListFieldProps: the values of a multi-valued attribute (one language, variant), in order. */
export interface ListFieldProps {
  /** The id of the list's first control (the "Add" button when empty). */
  id: string;
  label: string;
  attr: AttributeInfo;
  branch: string;
  /** The values in order (sortReverse 0, 1, 2 …); null or undefined = an empty row. */
  values: readonly unknown[];
  onChange: (values: unknown[]) => void;
  disabled?: boolean;
  describedBy?: string | undefined;
  invalid?: boolean;
  /** The API's message about one row (by position), shown under that row. */
  rowError?: { row: number; text: string } | undefined;
}

export type ListFieldComponent = ComponentType<ListFieldProps>;

type Entry = { match: (dataType: string) => boolean; load: () => Promise<FieldComponent> };
type ListEntry = { match: (dataType: string) => boolean; load: () => Promise<ListFieldComponent> };

const entries: Entry[] = [];
const listEntries: ListEntry[] = [];

/**
 * registerField adds an input for the data types match accepts; later
 * registrations win over earlier ones.
 */
export function registerField(match: (dataType: string) => boolean, load: () => Promise<FieldComponent>) {
  entries.unshift({ match, load });
}

/** fieldFor returns the loader of the input of a data type, if any field takes it. */
export function fieldFor(dataType: string): (() => Promise<FieldComponent>) | undefined {
  return entries.find((e) => e.match(dataType))?.load;
}

/**
 * registerListField adds the input of a multi-valued attribute of the data
 * types match accepts (references: cards in order); a data type without
 * one gets the generic list of its single-value input (fields/list.tsx).
 */
export function registerListField(match: (dataType: string) => boolean, load: () => Promise<ListFieldComponent>) {
  listEntries.unshift({ match, load });
}

/** listFieldFor returns the loader of a data type's own list input, if one is registered. */
export function listFieldFor(dataType: string): (() => Promise<ListFieldComponent>) | undefined {
  return listEntries.find((e) => e.match(dataType))?.load;
}
