"""The file opener: every file a model names or a workspace holds is opened here (`opener`), after
its path was resolved one folder at a time (`resolve` for the tools' confined paths,
`opener.parent_folder` for the real paths undo and the backups keep).

It lives in the lowest layer (like di_code.system.private_files) because the tools, the checkpoint
backups, undo, attachments and the ACP previews all open such files, and the session layer may
not import the tools. tests/test_guarded_files.py fails when a module opens a file another way.
"""
