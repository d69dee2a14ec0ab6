// Every field module, imported for its registerField calls.
import "./basic";
