# R reference for the random-slopes mixed model (tests/analysis/stats/test_stats_mixed_r.py).
# Run: Rscript random_slopes.R ../data     (R 4.2.2, lme4 1.1.31, lmerTest 3.1.3, emmeans 1.8.4.1, numDeriv 2016.8-1.1)
# The structure is chosen by the rule of eval_harness/analysis/stats/re_rule.py
# (docs/statistics.md §3.3), written here with lme4's own fits:
#   full = (1 | case_id) + one (0 + <term's sum-coded columns> | case_id) block per term,
#   the highest-order interaction included (the residual is then on a likelihood ridge;
#   lme4's nobs-vs-nRE checks are switched off for it); if the fitted cell covariance
#   sigma^2 (I + Xc Lambda Lambda' Xc') has an eigenvalue < 1e-4 x its largest, the
#   classical structure (the same blocks without the highest-order term) is fitted.
suppressMessages({library(lmerTest); library(emmeans)})
options(contrasts = c("contr.sum", "contr.poly"))
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE),
                                                  value = TRUE)[1])), "design.R"))
args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args)) args[1] else "../data"
g <- function(x) formatC(x, digits = 12, format = "g")
ctl <- lmerControl(optimizer = "nloptwrap",
                   optCtrl = list(xtol_abs = 1e-12, ftol_abs = 1e-14, xtol_rel = 0,
                                  ftol_rel = 0, maxeval = 1e5),
                   check.conv.singular = "ignore", check.nobs.vs.nRE = "ignore",
                   check.nobs.vs.rankZ = "ignore", check.nobs.vs.nlev = "ignore")
# lmerTest's Satterthwaite ingredients with tighter numerical derivatives: the same
# numDeriv calls as lmerTest:::as_lmerModLT (Hessian of devfun_vp at (theta, sigma), its
# Moore-Penrose inverse over eigenvalues > 1e-8, the Jacobian of get_covbeta), with
# Richardson's d = 0.02 and r = 5 instead of numDeriv's defaults (d = 0.1 / 1e-4, r = 4),
# whose error (~1e-6 in df) was the largest difference from our analytic derivatives
accurate <- function(fit, devfun) {
  ma <- list(eps = 1e-4, d = 0.02, zero.tol = sqrt(.Machine$double.eps / 7e-7), r = 5, v = 2)
  vp <- unname(c(fit@theta, fit@sigma))
  h <- numDeriv::hessian(lmerTest:::devfun_vp, vp, method.args = ma, devfun = devfun, reml = TRUE)
  e <- eigen(h, symmetric = TRUE)
  pos <- e$values > 1e-8
  fit@vcov_varpar <- 2 * e$vectors[, pos, drop = FALSE] %*%
    diag(1 / e$values[pos], nrow = sum(pos)) %*% t(e$vectors[, pos, drop = FALSE])
  jac <- numDeriv::jacobian(lmerTest:::get_covbeta, vp, method.args = ma, devfun = devfun)
  fit@Jac_list <- lapply(seq_len(ncol(jac)), function(i) array(jac[, i], dim = rep(length(fit@beta), 2)))
  fit
}
designs <- list(u2x2_slopes = c("A", "B"), u2x2_noslope = c("A", "B"), u3x2 = c("A", "B"),
                u2x2x2 = c("A", "B", "C"), u4 = c("A"), u2x2_nocase = c("A", "B"))
for (nm in names(designs)) {
  w <- designs[[nm]]
  x <- read_design(dir, nm, w)
  d <- x$d; fixed <- x$fixed; rhs <- x$rhs; mm <- x$mm; labs <- x$labs; cols <- x$cols
  ran <- x$ran
  cells <- expand.grid(lapply(setNames(w, w), function(f) levels(d[[f]])))
  xc <- model.matrix(rhs, cells)
  fitf <- function(s) {
    f <- as.formula(paste(fixed, "+", ran(s)))
    accurate(lmer(f, data = d, REML = TRUE, control = ctl),
             lme4::lmer(f, data = d, REML = TRUE, control = ctl, devFunOnly = TRUE))
  }
  cellcov <- function(fit, s) {  # sigma^2 I + sum over blocks of Xc_t Sigma_t Xc_t'
    vc <- VarCorr(fit)
    idx <- c(list(1), lapply(s, function(t) which(colnames(mm) %in% cols[[t]])))
    out <- diag(sigma(fit)^2, nrow(xc))
    for (b in seq_along(vc)) {
      m <- as.matrix(vc[[b]]); cn <- colnames(m)
      j <- match(cn, c("(Intercept)", gsub(":", "_", colnames(xc))[-1]))
      out <- out + xc[, j, drop = FALSE] %*% m %*% t(xc[, j, drop = FALSE])
    }
    out
  }
  slopes <- labs
  fit <- fitf(slopes)
  ev <- eigen(cellcov(fit, slopes), symmetric = TRUE, only.values = TRUE)$values
  if (min(ev) < 1e-4 * max(ev)) {
    slopes <- labs[sapply(strsplit(labs, ":"), length) < length(w)]
    fit <- fitf(slopes)
  }
  ev <- sort(eigen(cellcov(fit, slopes), symmetric = TRUE, only.values = TRUE)$values)
  cat(sprintf('    # lmer(%s + %s, REML = TRUE)  [structure chosen by the rule]\n', fixed, ran(slopes)))
  cat(sprintf('    ("%s", "structure"): dict(slopes=%s, reml=%s, cell_cov_eigen=[%s]),\n', nm,
      paste0("[", paste0('"', slopes, '"', collapse = ", "), "]"), g(REMLcrit(fit)),
      paste(g(ev), collapse = ", ")))
  a <- anova(fit, type = 3, ddf = "Satterthwaite")
  for (t in rownames(a)) {
    cat(sprintf('    ("%s", "%s"): dict(F=%s, df_num=%s, df_den=%s, p=%s),  # anova(fit, type = 3, ddf = "Satterthwaite")\n',
        nm, t, g(a[t, "F value"]), g(a[t, "NumDF"]), g(a[t, "DenDF"]), g(a[t, "Pr(>F)"])))
  }
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
