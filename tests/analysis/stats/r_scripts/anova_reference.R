# R reference values for tests/analysis/stats (run: Rscript anova_reference.R DATA_DIR)
# Prints Python literal lines; pasted into test_stats_r_reference.py.
suppressMessages({library(afex); library(lmerTest); library(emmeans)})
options(contrasts = c("contr.sum", "contr.poly"))
emm_options(lmer.df = "satterthwaite")
args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args)) args[1] else "."
g <- function(x) formatC(x, digits = 12, format = "g")
designs <- list(d2x2 = c("A", "B"), d3x2 = c("A", "B"), d4 = c("A"),
                d2x2x2 = c("A", "B", "C"), dboundary = c("A", "B"))
for (nm in names(designs)) {
  w <- designs[[nm]]
  d <- read.csv(file.path(dir, paste0(nm, ".csv")))
  for (f in c("case_id", w)) d[[f]] <- factor(d[[f]])
  fit <- aov_ez("case_id", "value", d, within = w,
                anova_table = list(correction = "GG", es = "pes"))
  gg <- anova(fit, es = "pes", correction = "GG")  # df are GG-corrected
  un <- anova(fit, es = "pes", correction = "none")
  eps <- summary(fit)$pval.adjustments   # NULL when every term has 1 df
  for (t in rownames(gg)) {
    e <- if (!is.null(eps) && t %in% rownames(eps)) eps[t, "GG eps"] else 1
    cat(sprintf('    ("%s", "rm", "%s"): dict(F=%s, df_num=%s, df_den=%s, p_raw=%s, p_unc=%s, eps=%s, pes=%s),\n',
        nm, t, g(un[t, "F"]), g(un[t, "num Df"]), g(un[t, "den Df"]), g(gg[t, "Pr(>F)"]),
        g(un[t, "Pr(>F)"]), g(e), g(gg[t, "pes"])))
  }
  form <- as.formula(paste("value ~", paste(w, collapse = "*"), "+ (1|case_id)"))
  m <- lmer(form, data = d, REML = TRUE)
  a <- anova(m, type = 3, ddf = "Satterthwaite")
  for (t in rownames(a)) {
    cat(sprintf('    ("%s", "lmm", "%s"): dict(F=%s, df_num=%s, df_den=%s, p_raw=%s),\n',
        nm, t, g(a[t, "F value"]), g(a[t, "NumDF"]), g(a[t, "DenDF"]), g(a[t, "Pr(>F)"])))
  }
  vc <- as.data.frame(VarCorr(m))
  cat(sprintf('    ("%s", "lmm", "varcomp"): dict(case=%s, residual=%s),\n', nm, g(vc$vcov[1]), g(vc$vcov[2])))
  # contrasts (first factor, and simple effects of A at the first level of B)
  emit <- function(tag, ct) {
    s <- summary(ct, infer = TRUE, adjust = "holm")
    ci <- confint(ct, adjust = "none")
    for (i in seq_len(nrow(s))) {
      cat(sprintf('    ("%s", "%s", "%s"): dict(estimate=%s, se=%s, df=%s, p_adj=%s, lo=%s, hi=%s),\n',
          nm, tag, as.character(s$contrast[i]), g(s$estimate[i]), g(s$SE[i]), g(s$df[i]),
          g(s$p.value[i]), g(ci$lower.CL[i]), g(ci$upper.CL[i])))
    }
  }
  emit("rm_A", emmeans(fit, pairwise ~ A, model = "multivariate")$contrasts)
  emit("lmm_A", emmeans(m, pairwise ~ A)$contrasts)
  if (length(w) > 1) {
    emit("rm_A|B=b1", emmeans(fit, pairwise ~ A | B, model = "multivariate", at = list(B = "b1"))$contrasts)
    emit("lmm_A|B=b1", emmeans(m, pairwise ~ A | B, at = list(B = "b1"))$contrasts)
  }
}
# unbalanced: lmer on all rows (no averaging needed: one row per case x cell)
d <- read.csv(file.path(dir, "dunbal.csv"))
for (f in c("case_id", "A", "B")) d[[f]] <- factor(d[[f]])
m <- lmer(value ~ A * B + (1 | case_id), data = d, REML = TRUE)
a <- anova(m, type = 3, ddf = "Satterthwaite")
for (t in rownames(a)) {
  cat(sprintf('    ("dunbal", "lmm", "%s"): dict(F=%s, df_num=%s, df_den=%s, p_raw=%s),\n',
      t, g(a[t, "F value"]), g(a[t, "NumDF"]), g(a[t, "DenDF"]), g(a[t, "Pr(>F)"])))
}
vc <- as.data.frame(VarCorr(m))
cat(sprintf('    ("dunbal", "lmm", "varcomp"): dict(case=%s, residual=%s),\n', g(vc$vcov[1]), g(vc$vcov[2])))
