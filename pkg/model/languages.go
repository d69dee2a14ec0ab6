package model

import "slices"

// MaxFallbackDepth caps a language fallback chain: the languages before the
// language-independent 0.
const MaxFallbackDepth = 16

// LanguageChain is the language fallback rule: the values shown in lang are
// lang's own, else those of its fallback language (AttrFallbackLanguage of
// the language object), followed transitively, else the language-
// independent ones (language 0). state returns, for a language on the
// chain, whether it is a live language object and its fallback (0: none).
// A language that is no live language object ends the chain (its own
// values still count), a cycle or MaxFallbackDepth cuts it, and the chain
// always ends with 0.
func LanguageChain(lang int64, state func(id int64) (live bool, fallback int64, err error)) ([]int64, error) {
	var chain []int64
	for id := lang; id != 0 && len(chain) < MaxFallbackDepth; {
		if slices.Contains(chain, id) {
			break
		}
		chain = append(chain, id)
		live, next, err := state(id)
		if err != nil {
			return nil, err
		}
		if !live {
			break
		}
		id = next
	}
	return append(chain, 0), nil
}

// VariantChain is the variant fallback rule: the requested variants in
// order (0 and repeats dropped), then 0 (the values without a variant).
func VariantChain(requested []int64) []int64 {
	out := make([]int64, 0, len(requested)+1)
	for _, v := range requested {
		if v != 0 && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return append(out, 0)
}

// Fallback is the order values are looked up in along both chains:
// variants outer, languages inner. It calls found with each (variant,
// language) pair until it returns true, and reports whether one did.
func Fallback(variants, langs []int64, found func(variant, lang int64) bool) bool {
	for _, va := range variants {
		for _, l := range langs {
			if found(va, l) {
				return true
			}
		}
	}
	return false
}
