package git

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
)

// catFile is one `git cat-file --batch` asked in turns: a read whose next
// question depends on the last answer (a commit, then its trees level by
// level, then the files) costs one git process, not one per level — a
// process is tens of milliseconds of a loaded machine, several per read
// at every story of an epic's status.
type catFile struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	errb bytes.Buffer
	args string // for errors
}

// catFile starts the batch; close ends it.
func (g Repo) catFile(ctx context.Context) (*catFile, error) {
	args := []string{"cat-file", "--batch"}
	cmd := g.command(ctx, args)
	c := &catFile{cmd: cmd, args: strings.Join(args, " ")}
	cmd.Stderr = &c.errb
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git %s: %w", c.args, err)
	}
	c.in, c.out = in, bufio.NewReaderSize(out, 64<<10)
	return c, nil
}

// close ends the batch and reaps git.
func (c *catFile) close() {
	c.in.Close()
	c.cmd.Wait()
}

// fail ends a batch that went wrong: git killed, so that a request still
// being written returns; the error says what git said, if anything.
func (c *catFile) fail(err error) error {
	c.cmd.Process.Kill()
	c.in.Close()
	c.cmd.Wait()
	if msg := strings.TrimSpace(c.errb.String()); msg != "" {
		return fmt.Errorf("git %s: %s (%w)", c.args, msg, err)
	}
	return fmt.Errorf("git %s: %w", c.args, err)
}

// batchObject is one answer of `git cat-file --batch`.
type batchObject struct {
	id, typ string
	content []byte
	missing bool
}

// batch asks for names (object names or <rev>:<path>), each found object
// checked against the name git gave it. The request is written while the
// answers are read: neither side waits on a full pipe.
func (c *catFile) batch(names []string) ([]batchObject, error) {
	var req bytes.Buffer
	for _, n := range names {
		if strings.ContainsAny(n, "\n") {
			return nil, fmt.Errorf("git cat-file: a name with a newline: %q", n)
		}
		req.WriteString(n + "\n")
	}
	written := make(chan error, 1)
	go func() {
		_, err := c.in.Write(req.Bytes())
		written <- err
	}()
	objs := make([]batchObject, 0, len(names))
	for _, n := range names {
		o, err := c.answer(n)
		if err != nil {
			err = c.fail(err)
			<-written
			return nil, err
		}
		objs = append(objs, o)
	}
	if err := <-written; err != nil {
		return nil, c.fail(err)
	}
	return objs, nil
}

// answer reads the answer to name.
func (c *catFile) answer(name string) (batchObject, error) {
	header, err := c.out.ReadString('\n')
	if err != nil {
		return batchObject{}, fmt.Errorf("no answer for %s: %w", name, err)
	}
	header = strings.TrimSuffix(header, "\n")
	if header == name+" missing" || header == name+" ambiguous" {
		return batchObject{missing: true}, nil
	}
	f := strings.Fields(header)
	if len(f) != 3 {
		return batchObject{}, fmt.Errorf("unexpected %q for %s", header, name)
	}
	size, err := strconv.Atoi(f[2])
	if err != nil || size < 0 {
		return batchObject{}, fmt.Errorf("bad header %q", header)
	}
	content := make([]byte, size+1) // and the newline after it
	if _, err := io.ReadFull(c.out, content); err != nil || content[size] != '\n' {
		return batchObject{}, fmt.Errorf("%s cut short: %v", name, cmp.Or(err, errors.New("no newline after it")))
	}
	content = content[:size]
	if objectHash(f[1], content, len(f[0])) != f[0] {
		return batchObject{}, fmt.Errorf("%s %s: %w", f[1], f[0], ErrBadObject)
	}
	return batchObject{id: f[0], typ: f[1], content: content}, nil
}

// objects reads objects of one type by their names, each checked against
// its hash.
func (c *catFile) objects(ids []string, typ string) ([][]byte, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	answers, err := c.batch(ids)
	if errors.Is(err, ErrBadObject) {
		return nil, fmt.Errorf("%w: the repository holds a replacement for it (an alternates file or a forged object in .git/objects)", err)
	}
	if err != nil {
		return nil, err
	}
	objs := make([][]byte, 0, len(ids))
	for i, o := range answers {
		switch {
		case o.missing:
			return nil, fmt.Errorf("object %s is missing from the repository", ids[i])
		case o.id != ids[i]:
			return nil, fmt.Errorf("git cat-file: %s answered for %s", o.id, ids[i])
		case o.typ != typ:
			return nil, fmt.Errorf("object %s is a %s, not a %s", ids[i], o.typ, typ)
		}
		objs = append(objs, o.content)
	}
	return objs, nil
}

// object reads one object of the given type, checked against its hash.
func (c *catFile) object(id, typ string) ([]byte, error) {
	objs, err := c.objects([]string{id}, typ)
	if err != nil {
		return nil, err
	}
	return objs[0], nil
}

// tree reads and parses a tree object, checked.
func (c *catFile) tree(id string) ([]treeEntry, error) {
	raw, err := c.object(id, "tree")
	if err != nil {
		return nil, err
	}
	return parseTree(id, raw)
}
