# R reference for `--method lmm --keep-incomplete` (tests/analysis/stats/test_stats_mixed_r.py):
# the random-intercept model on the unbalanced designs of data/u*.csv.
# Run: Rscript random_intercept.R ../data     (R 4.2.2, lme4 1.1.31, lmerTest 3.1.3)
suppressMessages(library(lmerTest))
options(contrasts = c("contr.sum", "contr.poly"))
args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args)) args[1] else "../data"
g <- function(x) formatC(x, digits = 12, format = "g")
ctl <- lmerControl(optimizer = "nloptwrap",
                   optCtrl = list(xtol_abs = 1e-12, ftol_abs = 1e-14, xtol_rel = 0,
                                  ftol_rel = 0, maxeval = 1e5), check.conv.singular = "ignore")
designs <- list(u2x2_slopes = c("A", "B"), u2x2_noslope = c("A", "B"), u3x2 = c("A", "B"),
                u2x2x2 = c("A", "B", "C"), u4 = c("A"), u2x2_nocase = c("A", "B"))
for (nm in names(designs)) {
  w <- designs[[nm]]
  d <- read.csv(file.path(dir, paste0(nm, ".csv")))
  for (f in c("case_id", w)) d[[f]] <- factor(d[[f]], levels = sort(unique(d[[f]])))
  fit <- lmer(as.formula(paste("value ~", paste(w, collapse = "*"), "+ (1 | case_id)")),
              data = d, REML = TRUE, control = ctl)
  a <- anova(fit, type = 3, ddf = "Satterthwaite")
  for (t in rownames(a)) {
    cat(sprintf('    ("%s", "%s"): dict(F=%s, df_num=%s, df_den=%s, p=%s),  # anova(lmer(value ~ %s + (1 | case_id)), type = 3)\n',
        nm, t, g(a[t, "F value"]), g(a[t, "NumDF"]), g(a[t, "DenDF"]), g(a[t, "Pr(>F)"]),
        paste(w, collapse = "*")))
  }
}
