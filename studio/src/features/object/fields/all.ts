// Every field module, imported for its registerField calls.
import "./reference";
import "./richtext";
