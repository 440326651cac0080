# R reference for the random-slopes mixed model (tests/analysis/stats/test_stats_mixed_r.py).
# Run: Rscript random_slopes.R ../data     (R 4.2.2, lme4 1.1.31, lmerTest 3.1.3, emmeans 1.8.4.1)
# The structure is chosen by the rule documented in docs/statistics.md §3.3, written here
# with R's own isSingular():
#   maximal identifiable on cell means = intercept + slopes of every term except the
#   highest-order interaction; drop slope terms (last first) while nobs <= n_case * q;
#   correlated fit -> if isSingular: uncorrelated (||) -> while isSingular: drop the slope
#   terms with a zero variance (theta < 1e-4) and refit ||; else keep the boundary fit.
suppressMessages({library(lmerTest); library(emmeans)})
options(contrasts = c("contr.sum", "contr.poly"))
args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args)) args[1] else "../data"
g <- function(x) formatC(x, digits = 12, format = "g")
ctl <- lmerControl(optimizer = "nloptwrap",
                   optCtrl = list(xtol_abs = 1e-12, ftol_abs = 1e-14, xtol_rel = 0,
                                  ftol_rel = 0, maxeval = 1e5),
                   check.conv.singular = "ignore")
designs <- list(u2x2_slopes = c("A", "B"), u2x2_noslope = c("A", "B"), u3x2 = c("A", "B"),
                u2x2x2 = c("A", "B", "C"), u4 = c("A"), u2x2_nocase = c("A", "B"))
for (nm in names(designs)) {
  w <- designs[[nm]]
  d <- read.csv(file.path(dir, paste0(nm, ".csv")))
  for (f in c("case_id", w)) d[[f]] <- factor(d[[f]], levels = sort(unique(d[[f]])))
  fixed <- paste("value ~", paste(w, collapse = "*"))
  mm <- model.matrix(as.formula(paste("~", paste(w, collapse = "*"))), d)
  colnames(mm) <- gsub(":", "_", colnames(mm))
  d <- cbind(d, mm[, -1, drop = FALSE])
  labs <- attr(terms(as.formula(fixed)), "term.labels")
  assign <- attr(mm, "assign")
  cols <- lapply(seq_along(labs), function(k) colnames(mm)[assign == k])
  names(cols) <- labs
  slopes <- labs[sapply(strsplit(labs, ":"), length) < length(w)]
  q <- function(s) 1 + sum(sapply(cols[s], length))
  while (length(slopes) && nrow(d) <= nlevels(d$case_id) * q(slopes)) slopes <- head(slopes, -1)
  ran <- function(s, bar) paste0("(1", if (length(s)) paste0(" + ", unlist(cols[s]), collapse = "") else "", " ", bar, " case_id)")
  fitf <- function(s, bar) lmer(as.formula(paste(fixed, "+", ran(s, bar))), data = d, REML = TRUE, control = ctl)
  fit <- fitf(slopes, "|"); bar <- "|"
  if (length(slopes) && isSingular(fit, tol = 1e-4)) {
    bar <- "||"; fit <- fitf(slopes, bar)
    repeat {
      if (!isSingular(fit, tol = 1e-4) || !length(slopes)) break
      th <- getME(fit, "theta")  # || with numeric covariates: one theta per column
      zero <- sapply(slopes, function(s) any(abs(th[paste0("case_id.", cols[[s]])]) < 1e-4))
      if (!any(zero)) break
      slopes <- slopes[!zero]; fit <- fitf(slopes, bar)
    }
  }
  if (!length(slopes)) bar <- "|"
  cat(sprintf('    # lmer(%s + %s, REML = TRUE)  [structure chosen by the rule]\n', fixed, ran(slopes, bar)))
  cat(sprintf('    ("%s", "structure"): dict(slopes=%s, correlated=%s, singular=%s, reml=%s),\n', nm,
      paste0("[", if (length(slopes)) paste0('"', slopes, '"', collapse = ", ") else "", "]"),
      if (bar == "|") "True" else "False", if (isSingular(fit, tol = 1e-4)) "True" else "False",
      g(REMLcrit(fit))))
  a <- anova(fit, type = 3, ddf = "Satterthwaite")
  for (t in rownames(a)) {
    cat(sprintf('    ("%s", "%s"): dict(F=%s, df_num=%s, df_den=%s, p=%s),  # anova(fit, type = 3, ddf = "Satterthwaite")\n',
        nm, t, g(a[t, "F value"]), g(a[t, "NumDF"]), g(a[t, "DenDF"]), g(a[t, "Pr(>F)"])))
  }
  cat(sprintf('    ("%s", "sigma2"): %s,  # sigma(fit)^2\n', nm, g(sigma(fit)^2)))
  emit <- function(tag, ct) {
    s <- summary(ct, infer = TRUE, adjust = "holm")
    for (i in seq_len(nrow(s))) {
      lab <- as.character(s$contrast[i])
      by <- if ("B" %in% names(s) && tag != "A|B" ) "" else if ("B" %in% names(s)) paste0("@", s$B[i]) else ""
      cat(sprintf('    ("%s", "%s", "%s%s"): dict(estimate=%s, se=%s, df=%s, p_adj=%s, lo=%s, hi=%s),\n',
          nm, tag, lab, by, g(s$estimate[i]), g(s$SE[i]), g(s$df[i]), g(s$p.value[i]),
          g(confint(ct, adjust = "none")$lower.CL[i]), g(confint(ct, adjust = "none")$upper.CL[i])))
    }
  }
  # summary(emmeans(fit, pairwise ~ F, lmer.df = "satterthwaite")$contrasts, infer = TRUE, adjust = "holm")
  for (f in w) emit(f, emmeans(fit, as.formula(paste("pairwise ~", f)), lmer.df = "satterthwaite")$contrasts)
  # simple effects: emmeans(fit, pairwise ~ A | B, lmer.df = "satterthwaite")$contrasts
  if (length(w) >= 2) emit("A|B", emmeans(fit, pairwise ~ A | B, lmer.df = "satterthwaite")$contrasts)
}
