package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	dockercontainer "github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/nektos/act/pkg/container"
)

// foreignOwned reports whether a file under dir is not owned by dir's
// owner (user or group): a container step wrote it as another user
// (root, mostly). Outside Unix nothing is found.
func foreignOwned(dir string) (uid, gid int, found bool) {
	st, err := os.Stat(dir)
	if err != nil {
		return 0, 0, false
	}
	own, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	uid, gid = int(own.Uid), int(own.Gid)
	errFound := errors.New("found")
	err = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return errFound // unreadable to the runner: not its own
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && (int(st.Uid) != uid || int(st.Gid) != gid) {
			return errFound
		}
		return nil
	})
	return uid, gid, errors.Is(err, errFound)
}

// giveBackWorkdir makes every file of the job's bind-mounted work tree
// its owner's again (the owner of the directory, the runner's user), when
// a container step left files of another user there (written as root in
// the container, they would make the runner's removal of the tree fail):
// a container of the job's image, labelled with the job's marker, runs
// chown -R on the tree as root. Act_runner and Forgejo's runner avoid the
// problem by not binding the tree (they copy it into a volume); forgeapi
// binds it, so the steps see and leave the checked-out files in place,
// and gives it back after. It is a no-op when nothing is foreign, and
// best effort: an image without chown leaves the files as they are.
func giveBackWorkdir(workdir, image, marker string, labels map[string]string) error {
	uid, gid, found := foreignOwned(workdir)
	if !found || image == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cli, err := container.GetDockerClient(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	created, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config: &dockercontainer.Config{Image: image, User: "0:0", Entrypoint: []string{"chown"},
			Cmd:    []string{"-R", fmt.Sprintf("%d:%d", uid, gid), "/forgeapi-workdir"},
			Labels: labels, Env: []string{markerEnv + "=" + marker}},
		HostConfig: &dockercontainer.HostConfig{Binds: []string{workdir + ":/forgeapi-workdir"}, NetworkMode: "none"},
	})
	if err != nil {
		return err
	}
	defer func() {
		_, _ = cli.ContainerRemove(context.Background(), created.ID, client.ContainerRemoveOptions{Force: true})
	}()
	if _, err := cli.ContainerStart(ctx, created.ID, client.ContainerStartOptions{}); err != nil {
		return err
	}
	wait := cli.ContainerWait(ctx, created.ID, client.ContainerWaitOptions{Condition: dockercontainer.WaitConditionNotRunning})
	select {
	case res := <-wait.Result:
		if res.StatusCode != 0 {
			return fmt.Errorf("chown in %s exited %d", image, res.StatusCode)
		}
		return nil
	case err := <-wait.Error:
		return err
	}
}
