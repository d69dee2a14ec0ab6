package content

// MaxExactInteger (2^53 − 1) bounds values of Integer attributes. Values
// travel as JSON numbers through google.protobuf.Value, a double, which
// holds every integer up to 2^53 but not all beyond it: 9007199254740993
// would silently read back as 9007199254740992. So a larger magnitude is
// refused (ErrInvalid naming the attribute) rather than rounded; anything
// stored reads back exactly through Management, Delivery and Index.
// Decimal and Float attributes are doubles and round like doubles.
const MaxExactInteger int64 = 1<<53 - 1
