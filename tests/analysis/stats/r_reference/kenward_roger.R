# R reference for the Kenward-Roger df of the random-slopes mixed model
# (tests/analysis/stats/test_kenward_roger.py reads the CSV this writes).
# Run: Rscript kenward_roger.R ../data > ../data/kr_reference.csv   (sources design.R beside it)
#   (R 4.2.2, lme4 1.1.31, lmerTest 3.1.3, pbkrtest 0.5.2, emmeans 1.8.4.1)
# Per design (the u*.csv of random_slopes.R) two structures, one block per term:
#   "classical" = (1 | case_id) + (0 + <sum-coded columns of each term> | case_id) for
#     every term but the highest-order one (q < cells: every variance identified);
#   "full" = every term's slopes (the residual on the likelihood ridge of re_rule step 1;
#     pbkrtest then inverts the singular information with MASS::ginv).
# Calls: terms  anova(fit, type = 3, ddf = "Kenward-Roger")            (lmerTest)
#        contrasts summary(emmeans(fit, pairwise ~ F, lmer.df = "kenward-roger")$contrasts,
#                          infer = TRUE, adjust = "none")             (emmeans)
suppressMessages({library(lmerTest); library(emmeans); library(pbkrtest)})
options(contrasts = c("contr.sum", "contr.poly"))
emm_options(pbkrtest.limit = 1e6)
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE),
                                                  value = TRUE)[1])), "design.R"))
args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args)) args[1] else "../data"
ctl <- lmerControl(optimizer = "nloptwrap",
                   optCtrl = list(xtol_abs = 1e-12, ftol_abs = 1e-14, xtol_rel = 0,
                                  ftol_rel = 0, maxeval = 1e5),
                   check.conv.singular = "ignore", check.nobs.vs.nRE = "ignore",
                   check.nobs.vs.rankZ = "ignore", check.nobs.vs.nlev = "ignore")
designs <- list(u2x2_slopes = c("A", "B"), u2x2_noslope = c("A", "B"), u3x2 = c("A", "B"),
                u2x2x2 = c("A", "B", "C"), u4 = c("A"))
out <- NULL
row <- function(...) out <<- rbind(out, data.frame(..., stringsAsFactors = FALSE))
for (nm in names(designs)) {
  w <- designs[[nm]]
  x <- read_design(dir, nm, w)
  d <- x$d; fixed <- x$fixed; labs <- x$labs; ran <- x$ran
  structures <- list(classical = labs[sapply(strsplit(labs, ":"), length) < length(w)],
                     full = labs)
  for (sname in names(structures)) {
    s <- structures[[sname]]
    fit <- lmer(as.formula(paste(fixed, "+", ran(s))), data = d, REML = TRUE, control = ctl)
    slopes <- paste(s, collapse = " ")
    a <- anova(fit, type = 3, ddf = "Kenward-Roger")
    for (t in rownames(a))
      row(design = nm, structure = sname, slopes = slopes, reml = REMLcrit(fit), kind = "term",
          label = t, F = a[t, "F value"], ndf = a[t, "NumDF"], ddf = a[t, "DenDF"],
          p = a[t, "Pr(>F)"], estimate = NA, se = NA)
    for (f in w) {
      ct <- summary(emmeans(fit, as.formula(paste("pairwise ~", f)),
                            lmer.df = "kenward-roger")$contrasts, infer = TRUE, adjust = "none")
      for (i in seq_len(nrow(ct)))
        row(design = nm, structure = sname, slopes = slopes, reml = REMLcrit(fit),
            kind = "contrast", label = as.character(ct$contrast[i]), F = NA, ndf = 1,
            ddf = ct$df[i], p = ct$p.value[i], estimate = ct$estimate[i], se = ct$SE[i])
    }
  }
}
write.csv(out, stdout(), row.names = FALSE)  # 15 significant digits
