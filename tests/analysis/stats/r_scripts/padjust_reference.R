# R reference values for adjust_pvalues (run: Rscript padjust_reference.R)
g <- function(x) paste0("[", paste(ifelse(is.na(x), "nan", formatC(x, digits = 15, format = "g")), collapse = ", "), "]")
vs <- list(
  v1 = c(0.01, 0.04, 0.03, 0.005),
  v2 = c(0.02, NA, 0.02, 0.5, 0.02, NA, 0.001),
  v3 = c(0.2, 0.2, 0.2, 0.2),
  v4 = c(0.049, 0.051, 0.0001, 0.9, 1, 0.3, 0.012, 0.012),
  v5 = c(NA, 0.03),
  v6 = c(0.8, 0.6, 0.7)
)
for (nm in names(vs)) for (m in c("holm", "BH")) {
  cat(sprintf('    ("%s", "%s"): (%s, %s),  # p.adjust(%s, "%s")\n', nm, tolower(m), g(vs[[nm]]),
      g(p.adjust(vs[[nm]], m)), deparse(vs[[nm]]), m))
}
