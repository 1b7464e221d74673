//go:build !unix

package mirror

import "errors"

func mkfifo(string) error { return errors.New("no named pipes here") }
