package tcp

// DropLink implements backends.LinkDropper: it tells the peer why, closes
// the connection and fails every operation on the link with err. The peer
// fails its side when it reads the abort frame or finds the connection
// closed.
func (ep *endpoint) DropLink(peer int, err error) {
	l, lerr := ep.linkTo(peer)
	if lerr != nil {
		return
	}
	l.abort(err)
	l.fail(err)
}
