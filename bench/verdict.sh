# bench/verdict.sh: sourced by the bench/*.sh parts; prints figures in the line format of
# bench/README.md, which bench/run collects and checks.
#   ns_check KEY VALUE OP TARGET   `KEY: VALUE (target OP TARGET) PASS|FAIL`  (OP: <= < >= > ==)
#                                  FAIL also when VALUE is not a number (e.g. "not measured")
#   ns_info KEY VALUE              `KEY: VALUE (info)`: a figure shown without a pass criterion
#   ns_value KEY FILE              the value of the last `KEY: VALUE` line of FILE ("" if none)
#   ns_indent FILE                 FILE's lines indented by two spaces (a program's raw output)

ns_check() {
  awk -v k="$1" -v v="$2" -v op="$3" -v t="$4" 'BEGIN {
    num = "^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$"
    ok = 0
    if (v ~ num && t ~ num) {
      x = v + 0; y = t + 0
      if (op == "<=") ok = x <= y; else if (op == "<") ok = x < y
      else if (op == ">=") ok = x >= y; else if (op == ">") ok = x > y
      else if (op == "==") ok = x == y
    }
    if (v == "") v = "not measured"
    printf "%s: %s (target %s %s) %s\n", k, v, op, t, ok ? "PASS" : "FAIL"
  }'
}

ns_info() {
  printf '%s: %s (info)\n' "$1" "${2:-not measured}"
}

ns_value() {
  sed -n "s/^$1: \\([^ ]*\\).*/\\1/p" "$2" 2>/dev/null | tail -n 1
}

ns_indent() {
  sed 's/^/  /' "$1"
}
