package templates

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"golang.org/x/text/number"
)

// maxDecimals bounds the decimals number takes.
const maxDecimals = 20

// number formats v (a number, or a string holding one) for the render's
// culture with golang.org/x/text: grouping and decimal separators of the
// culture, and decimals fraction digits when given (else as many as v
// needs, at most 6).
func (r *run) number(v any, decimals ...int) (string, error) {
	f, ok := toFloat(v)
	if !ok {
		if v == nil {
			return "", nil
		}
		return "", fmt.Errorf("number: %v is not a number", v)
	}
	opts := []number.Option{number.MaxFractionDigits(6)}
	if len(decimals) > 0 {
		d := decimals[0]
		if d < 0 || d > maxDecimals {
			return "", fmt.Errorf("number: decimals must lie within 0..%d", maxDecimals)
		}
		opts = []number.Option{number.MinFractionDigits(d), number.MaxFractionDigits(d)}
	}
	return message.NewPrinter(r.culture).Sprint(number.Decimal(f, opts...)), nil
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

// dateFormat is how one culture writes dates: Go layouts for the short
// (numeric) and long (month name) forms and the time of day, and the
// month names of the long form.
type dateFormat struct {
	short, long, clock string
	months             [12]string
}

var (
	englishMonths = [12]string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	germanMonths  = [12]string{"Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"}
	frenchMonths  = [12]string{"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"}
	spanishMonths = [12]string{"enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"}
	italianMonths = [12]string{"gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto", "settembre", "ottobre", "novembre", "dicembre"}
	dutchMonths   = [12]string{"januari", "februari", "maart", "april", "mei", "juni", "juli", "augustus", "september", "oktober", "november", "december"}
)

// dateCultures are the cultures dates are written for (CLDR's medium
// patterns); another culture takes the closest one by
// golang.org/x/text/language matching, else en-US. "January" in a long
// layout stands for the month name.
var dateCultures = []struct {
	tag language.Tag
	f   dateFormat
}{
	{language.AmericanEnglish, dateFormat{"1/2/2006", "January 2, 2006", "3:04 PM", englishMonths}},
	{language.BritishEnglish, dateFormat{"02/01/2006", "2 January 2006", "15:04", englishMonths}},
	{language.German, dateFormat{"02.01.2006", "2. January 2006", "15:04", germanMonths}},
	{language.French, dateFormat{"02/01/2006", "2 January 2006", "15:04", frenchMonths}},
	{language.Spanish, dateFormat{"2/1/2006", "2 de January de 2006", "15:04", spanishMonths}},
	{language.Italian, dateFormat{"02/01/2006", "2 January 2006", "15:04", italianMonths}},
	{language.Dutch, dateFormat{"2-1-2006", "2 January 2006", "15:04", dutchMonths}},
}

var dateMatcher = func() language.Matcher {
	tags := make([]language.Tag, len(dateCultures))
	for i, c := range dateCultures {
		tags[i] = c.tag
	}
	return language.NewMatcher(tags)
}()

func dateFormatFor(t language.Tag) dateFormat {
	_, i, _ := dateMatcher.Match(t)
	return dateCultures[i].f
}

// date formats v (a DateTime or Date value: RFC 3339 or yyyy-mm-dd) for
// the culture: style "short" (default, numeric), "long" (month name),
// "shortTime" or "longTime" (with the time of day, in the value's own
// offset).
func (r *run) date(v any, style ...string) (string, error) {
	s, ok := v.(string)
	if !ok {
		if v == nil {
			return "", nil
		}
		return "", fmt.Errorf("date: %v is not a date", v)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		if t, err = time.Parse(time.DateOnly, s); err != nil {
			return "", fmt.Errorf("date: %q is not a date (RFC 3339 or yyyy-mm-dd)", s)
		}
	}
	f := dateFormatFor(r.culture)
	st := "short"
	if len(style) > 0 {
		st = style[0]
	}
	var out string
	switch st {
	case "short", "shortTime":
		out = t.Format(f.short)
	case "long", "longTime":
		out = strings.Replace(t.Format(strings.Replace(f.long, "January", "\x00", 1)), "\x00", f.months[t.Month()-1], 1)
	default:
		return "", fmt.Errorf(`date: style %q is none of "short", "long", "shortTime", "longTime"`, st)
	}
	if strings.HasSuffix(st, "Time") {
		out += " " + t.Format(f.clock)
	}
	return out, nil
}
