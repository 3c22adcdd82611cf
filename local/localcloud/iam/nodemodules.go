package iam

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// evaluatorPackage is the npm package the sidecar needs, relative to a
// node_modules directory.
const evaluatorPackage = "@cloud-copilot/iam-simulate"

// nodeModules finds the node_modules that holds the evaluator: the
// MYRIARCH_NODE_MODULES directory when set, else the nearest node_modules
// above the current directory (the repository's, installed by npm ci).
func nodeModules() (string, error) {
	if dir := os.Getenv("MYRIARCH_NODE_MODULES"); dir != "" {
		if !hasEvaluator(dir) {
			return "", fmt.Errorf("iam: MYRIARCH_NODE_MODULES=%s has no %s (run npm ci at the repository root)", dir, evaluatorPackage)
		}
		return filepath.Abs(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if candidate := filepath.Join(dir, "node_modules"); hasEvaluator(candidate) {
			return candidate, nil
		}
		if filepath.Dir(dir) == dir {
			return "", errors.New("iam: no node_modules with " + evaluatorPackage + " above the current directory: run npm ci at the repository root, or set MYRIARCH_NODE_MODULES")
		}
	}
}

func hasEvaluator(modules string) bool {
	_, err := os.Stat(filepath.Join(modules, evaluatorPackage, "package.json"))
	return err == nil
}
