// Every field module, imported for its registerField calls.
export {};
