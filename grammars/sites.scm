;; placeholder
