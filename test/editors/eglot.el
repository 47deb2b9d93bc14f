;;; eglot.el --- runs docs/editors.md's eglot configuration in emacs --batch  -*- lexical-binding: t -*-
;;
;; Started by eglot_test.go as
;;   emacs --batch -Q -l eglot.el
;; with SAGA_EMACS_CONFIG (the configuration block of docs/editors.md, as a
;; file) and SAGA_FILE (a task file with a misspelt dependency). It prints
;; one line "RESULT <json>" and exits.

;; -Q skips Debian's site-start, which puts the packages of elpa-eglot on the
;; load path for an interactive Emacs.
(require 'package)
(add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa")
(package-initialize)
(require 'json)

(load (getenv "SAGA_EMACS_CONFIG") nil t)
(find-file (getenv "SAGA_FILE"))
;; eglot-ensure connects from post-command-hook, after the command that
;; visited the file: batch mode runs no command loop, so run the hook once.
(run-hooks 'post-command-hook)

(let ((deadline (+ (float-time) 30))
      (found nil))
  (while (and (not found) (< (float-time) deadline))
    (accept-process-output nil 0.1)
    (dolist (d (flymake-diagnostics))
      (when (string-match-p "unknown-dependency" (flymake-diagnostic-text d))
        (setq found (flymake-diagnostic-text d)))))
  (let ((server (eglot-current-server)))
    (princ (format "RESULT %s\n"
                   (json-encode
                    `((mode . ,(symbol-name major-mode))
                      (server . ,(and server (plist-get (eglot--server-info server) :name)))
                      (command . ,(and server (process-command (jsonrpc--process server))))
                      (diagnostic . ,found)))))
    (when server
      (eglot-shutdown server))))
