# One design of ../data for the R reference scripts (random_slopes.R, kenward_roger.R):
# the data with the sum-coded columns of every term (R's contr.sum, as the Python code),
# the fixed formula, the term labels, each term's columns and the random part of a set
# of slope terms, one (0 + <columns> | case_id) block per term.
read_design <- function(dir, nm, w) {
  d <- read.csv(file.path(dir, paste0(nm, ".csv")))
  for (f in c("case_id", w)) d[[f]] <- factor(d[[f]], levels = sort(unique(d[[f]])))
  fixed <- paste("value ~", paste(w, collapse = "*"))
  rhs <- as.formula(paste("~", paste(w, collapse = "*")))
  mm <- model.matrix(rhs, d)
  colnames(mm) <- gsub(":", "_", colnames(mm))
  d <- cbind(d, mm[, -1, drop = FALSE])
  labs <- attr(terms(as.formula(fixed)), "term.labels")
  assign <- attr(mm, "assign")
  cols <- lapply(seq_along(labs), function(k) colnames(mm)[assign == k])
  names(cols) <- labs
  ran <- function(s) paste(c("(1 | case_id)", sapply(s, function(t)
    paste0("(0 + ", paste(cols[[t]], collapse = " + "), " | case_id)"))), collapse = " + ")
  list(d = d, fixed = fixed, rhs = rhs, mm = mm, labs = labs, cols = cols, ran = ran)
}
