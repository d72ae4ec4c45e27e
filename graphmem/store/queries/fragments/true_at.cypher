// args: lo, hi, at
// Invariant 3, true at valid time `at`: inside the valid interval [lo, hi), an open end
// (null) reaching as far as it may. `lo` and `hi` are a fact's valid_from and valid_to (or
// the valid_to it carried while believed, stated_valid_to).
((lo IS NULL OR lo <= at) AND (hi IS NULL OR hi > at))
